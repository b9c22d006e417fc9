"""The ``function-dynamo`` command line: serve, render (the in-process pipeline runner), validate, xrds, bench."""
