"""The local stack: the deployed system on one machine, with no Docker and no AWS account.

``template`` creates what ``template.yaml`` declares in an AWS emulator
(``emulator``: moto's server on loopback); ``stack`` imports the functions as
Lambda would and serves them behind ``gateway`` (API Gateway's HTTP API, routed
by ``router`` from the template), with ``poller`` (the SQS trigger and the
schedules), ``sink`` (the local webhook receiver) and ``functions`` (invocations
and continuations). ``demo`` drives one approval end to end over HTTP.

This is an adapter package: it imports boto3, httpx and moto (a development
dependency), so nothing a Lambda function imports may import it.
"""

__all__: list[str] = []
