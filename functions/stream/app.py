"""The stream function: POST /agents/{name}/messages/stream on a function URL.

Not a Lambda handler: run.sh runs this under AWS's Lambda Web Adapter, which
forwards each function URL request to the server it starts on $PORT.
"""

import os

from signoff.api.stream_server import make_server
from signoff.aws.deployment import api_from_env

API = api_from_env()

if __name__ == "__main__":
    port = int(os.environ.get("PORT", "8080"))
    server = make_server(lambda: API, host="127.0.0.1", port=port, max_body=API.max_body_bytes)
    server.serve_forever()
