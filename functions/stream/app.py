"""The stream function: POST /agents/{name}/messages/stream on a function URL.

Not a Lambda handler: run.sh runs this under AWS's Lambda Web Adapter, which
forwards each function URL request to the server it starts on $PORT.
"""

import os

from signoff.api.stream_server import make_server
from signoff.aws.deployment import api_from_env
from signoff.settings import LAMBDA_MAX_TIMEOUT, Deployment

SETTINGS = Deployment.from_env()
API = api_from_env(SETTINGS)
# A turn yields this long after its request came, before the invocation's timeout,
# and continues in the message function (SIGNOFF_CONTINUE_FUNCTION).
BUDGET = (SETTINGS.function_timeout or LAMBDA_MAX_TIMEOUT) - API.safety_margin

if __name__ == "__main__":
    port = int(os.environ.get("PORT", "8080"))
    limit = API.max_body_bytes
    server = make_server(lambda: API, host="127.0.0.1", port=port, max_body=limit, budget=BUDGET)
    server.serve_forever()
