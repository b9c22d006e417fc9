"""The profiling Job's ``output-copier`` sidecar: it publishes the profiler's progress and result as the ConfigMap
``dgdr-output-<dgdr>`` that the DGDR step reads (docs/upstream/checkpoint-gms-dgdr-model.md §4.4).

It polls ``/data/profiler_status.yaml`` every ``POLL_SECONDS`` (10) and applies the ConfigMap whenever the phase or
message changes (keys ``phase``, ``message``). On ``status: success`` it adds ``profiler_status: success``,
``final_config.yaml`` and ``profiler_status.yaml`` and exits 0; on ``status: failed`` it adds
``profiler_status: failed``, ``profiler_error`` and ``profiler_status.yaml`` and exits 0 (the DGDR reads the
failure from the ConfigMap). It exits 1, failing the Job, when the profiler container has ended and the status
file is still missing ``STATUS_WAIT_SECONDS`` (120) later, or says anything but success or failed.

The ConfigMap is controlled by the DGDR's composite (owner reference), so it goes with it. Every value the
script writes is a YAML block scalar, so a message or file may hold any text. The script reads the status file's
keys line-wise (a value folded over several lines is joined, quotes and a block indicator dropped; of a value
with blank lines, the first paragraph), which is enough for ``phase``, ``message`` and ``error`` in one line;
the step prefers what it parses from the copied ``profiler_status.yaml`` itself
(``functions.kinds.request.request_step``).
"""

from __future__ import annotations

COPIER_SCRIPT = r"""set -u
out=/data
status_file="$out/profiler_status.yaml"
cm_file=/tmp/output-configmap.yaml
poll="${POLL_SECONDS:-10}"
status_wait="${STATUS_WAIT_SECONDS:-120}"

field() {  # a top-level key's value: continuation lines joined, outer quotes and a block indicator dropped
  { cat "$status_file" 2>/dev/null; echo; } | sed -n -e "/^$1:/{" -e "s/^$1:[[:space:]]*//" -e h \
    -e ':more' -e n -e '/^[[:space:]]/{' -e 's/^[[:space:]]*/ /' -e H -e 'b more' -e '}' \
    -e x -e 's/\n//g' -e p -e q -e '}' | unquote
}

unquote() {
  IFS= read -r v || v=""
  case "$v" in
    '|'* | '>'*) v=${v#"${v%%[[:space:]]*}"}; v=${v# } ;;
  esac
  case "$v" in
    \"*\") v=${v#\"}; v=${v%\"} ;;
    \'*\') v=${v#\'}; v=${v%\'}; v=$(printf '%s' "$v" | sed "s/''/'/g") ;;
    \"*) v=${v#\"} ;;  # a quoted value of several paragraphs: its first
    \'*) v=${v#\'}; v=$(printf '%s' "$v" | sed "s/''/'/g") ;;
  esac
  printf '%s' "$v"
}

value() {  # one data entry from a string
  printf '  %s: |2-\n' "$1"
  printf '%s\n' "$2" | sed 's/^/    /'
}

file() {  # one data entry from a file (its last line ended even when the file does not end it)
  printf '  %s: |2\n' "$1"
  sed 's/^/    /' "$2"
  [ -z "$(tail -c 1 "$2")" ] || printf '\n'
}

publish() {  # phase message [success|failed]
  {
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n'
    # names, labels and UIDs hold no quote or backslash: double quotes keep 1234 or yes a string
    printf '  name: "%s"\n  namespace: "%s"\n' "$OUTPUT_CONFIGMAP" "$DGDR_NAMESPACE"
    printf '  labels:\n    dgdr.nvidia.com/name: "%s"\n' "$DGDR_LABEL"
    printf '    dgdr.nvidia.com/namespace: "%s"\n' "$DGDR_NAMESPACE"
    printf '    nvidia.com/managed-by: dynamo-operator\n'
    printf '  ownerReferences:\n  - apiVersion: "%s"\n    kind: "%s"\n' "$OWNER_API_VERSION" "$OWNER_KIND"
    printf '    name: "%s"\n    uid: "%s"\n    controller: true\n' "$OWNER_NAME" "$OWNER_UID"
    printf 'data:\n'
    value phase "$1"
    value message "$2"
    case "${3:-}" in
      success)
        value profiler_status success
        file final_config.yaml "$out/final_config.yaml"
        file profiler_status.yaml "$status_file"
        ;;
      failed)
        value profiler_status failed
        value profiler_error "$(field error)"
        file profiler_status.yaml "$status_file"
        ;;
    esac
  } > "$cm_file"
  kubectl apply -f "$cm_file"
}

profiler_ended() {
  ended=$(kubectl get pod "$POD_NAME" -n "$DGDR_NAMESPACE" \
    -o 'jsonpath={.status.containerStatuses[?(@.name=="profiler")].state.terminated.reason}' 2>/dev/null) || return 1
  [ -n "$ended" ]
}

last=""
waited=0
while :; do
  if [ -f "$status_file" ]; then
    status=$(field status)
    phase=$(field phase)
    message=$(field message)
    case "$status" in
      success)
        if [ ! -f "$out/final_config.yaml" ]; then
          echo "output-copier: the profiler reported success but wrote no $out/final_config.yaml" >&2
          exit 1
        fi
        publish "${phase:-Done}" "$message" success
        exit $?
        ;;
      failed)
        publish "$phase" "$message" failed
        exit $?
        ;;
    esac
    if [ -n "$phase" ] && [ "$phase|$message" != "$last" ]; then
      publish "$phase" "$message" && last="$phase|$message"
    fi
  fi
  if profiler_ended; then
    if [ ! -f "$status_file" ]; then
      if [ "$waited" -ge "$status_wait" ]; then
        echo "output-copier: no $status_file ${status_wait}s after the profiler ended" >&2
        exit 1
      fi
      waited=$((waited + poll))
    else
      case "$(field status)" in
        success | failed) continue ;;
      esac
      echo "output-copier: the profiler ended with status '$(field status)'" >&2
      exit 1
    fi
  fi
  sleep "$poll"
done
"""
