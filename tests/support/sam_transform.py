"""template.yaml through SAM's own transform, with parameter overrides: what CloudFormation deploys.

Run in the SAM CLI's virtualenv (``.venv-sam``, where ``samtranslator`` lives;
its pins clash with the dev tools'): ``python sam_transform.py TEMPLATE
NAME=VALUE ...`` prints the transformed template as JSON. The transform needs
S3 locations, not folders: ``CodeUri`` / ``ContentUri`` stand in as one, as
``sam package`` would write them.
"""

from __future__ import annotations

import json
import sys
from typing import Any


class _NoManagedPolicies:
    """The transform's managed-policy lookup: the template names none it needs resolved."""

    def load(self) -> dict[str, str]:
        return {}


def main(argv: list[str]) -> None:
    from samcli.yamlhelper import yaml_parse  # type: ignore[import-not-found]
    from samtranslator.translator.transform import transform  # type: ignore[import-not-found]

    path, *overrides = argv
    with open(path, encoding="utf-8") as file:
        template: dict[str, Any] = yaml_parse(file.read())
    for resource in template["Resources"].values():
        properties = resource.get("Properties", {})
        for key in ("CodeUri", "ContentUri"):
            if key in properties:
                properties[key] = "s3://bucket/key"
    parameters = dict(override.split("=", 1) for override in overrides)
    print(json.dumps(transform(template, parameters, _NoManagedPolicies()), default=str))


if __name__ == "__main__":
    main(sys.argv[1:])
