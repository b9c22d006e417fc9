"""The real stack the tests and scripts run on: every helper that starts a process or talks to one.

Layers, bottom up; a module imports harness modules of its own layer or below, and ``fixtures``, never a test
module (``tests/test_layers.py`` holds it, ``docs/testing.md`` draws it):

0. ``poll``: the one way to wait (``until``), which every other module and test waits through.
1. ``pki``: certificates (openssl).
2. ``controlplane``: etcd, kube-apiserver and kube-controller-manager on 127.0.0.1, their processes, an HTTPS client.
3. ``apiserver``: CRDs and objects on that API server.
4. What Crossplane runs on and with: ``crossplane_rbac`` (its chart's ServiceAccounts and roles, the audit log),
   ``packages`` (the built runtime image and xpkgs), ``server`` (``function-dynamo serve``), ``container`` (the
   packaged image under runc).
5. ``crossplane_core``: Crossplane core with the packages installed.
6. What a test does with it: ``composites`` (apply an example, find its XR, wait until it is Synced, compare with the
   preview), the played controllers and providers (``controller_play``, ``kubelet_play``, ``metrics_play``,
   ``providers``), ``verdicts`` (the API server's verdict on a claim), ``cli`` (kubectl and ``function-dynamo`` as a
   person runs them) and ``operator_stack`` (the upstream operator as its chart runs it).
7. The drivers the tests and ``scripts/`` share: ``differential`` and ``migration_report`` (the operator beside the
   package), ``fault_harness`` and ``fault_proxy`` (faults), ``bench_controllers`` (what a controller spends).
"""
