#!/bin/sh
# The stream function's entry (its Handler). The Lambda Web Adapter layer's
# /opt/bootstrap (AWS_LAMBDA_EXEC_WRAPPER) runs this instead of the Python
# runtime's bootstrap: it starts the stream server (app.py) on $PORT, the adapter waits for
# its readiness path, then forwards each function URL request to it.
# The layers' Python (/opt/python) before the runtime's boto3, as Lambda orders them.
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}/opt/python:${LAMBDA_RUNTIME_DIR:-/var/runtime}"
exec python3 "${LAMBDA_TASK_ROOT:-/var/task}/app.py"
