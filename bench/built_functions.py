"""The built template's functions as a cold-start benchmark runs them: each one's handler,
``sys.path`` (its build folder and Python layers), agents folder and environment.

The template's values (``!Ref``, ``!Sub``) become well-formed stand-ins for what a
deployed stack would resolve them to; ``bench/cold_start.py`` points them at the
resources of its moto server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

STACK = "signoff-bench"
ACCOUNT = "123456789012"
REGION = "us-east-1"


@dataclass(frozen=True)
class Function:
    """One built function: the statement that imports its handler, and its sys.path."""

    name: str  # MessageFunction -> message
    logical_id: str
    module: str
    python_path: tuple[Path, ...]
    agents: Path
    memory: int
    variables: dict[str, str]
    kind: str  # http, sqs or schedule: which reference it is measured against

    @property
    def layers(self) -> tuple[Path, ...]:
        return self.python_path[1:]


# What ${AWS::…} pseudo parameters resolve to in the stand-in stack.
PSEUDO = {
    "AWS::StackName": STACK,
    "AWS::Region": REGION,
    "AWS::AccountId": ACCOUNT,
    "AWS::Partition": "aws",
    "AWS::URLSuffix": "amazonaws.com",
}


def _fake(value: Any, template: dict[str, Any]) -> str:
    """A well-formed stand-in for what a template value resolves to in a deployed stack."""
    if not isinstance(value, dict):
        return str(value)
    if isinstance(value.get("Fn::Sub"), str):
        return re.sub(
            r"\$\{([^}!.]+)\}",
            lambda name: PSEUDO.get(name[1]) or _fake({"Ref": name[1]}, template),
            value["Fn::Sub"],
        )
    logical_id = str(value.get("Ref"))
    if logical_id in PSEUDO:
        return PSEUDO[logical_id]
    if logical_id in template.get("Parameters", {}):
        return str(template["Parameters"][logical_id].get("Default", ""))
    kind = template["Resources"].get(logical_id, {}).get("Type")
    if kind == "AWS::DynamoDB::Table":
        return f"{STACK}-{logical_id}-0A1B2C3D4E5F"
    if kind == "AWS::S3::Bucket":
        return f"{STACK}-{logical_id.lower()}-0a1b2c3d4e5f"
    if kind == "AWS::SQS::Queue":
        return f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{STACK}-{logical_id}-0A1B2C3D4E5F"
    if kind == "AWS::SecretsManager::Secret":
        return f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:{logical_id}-0A1B2C3D-AbCdEf"
    if kind in {"AWS::Serverless::HttpApi", "AWS::ApiGatewayV2::Api"}:
        return "a1b2c3d4e5"
    raise SystemExit(f"cold_start.py cannot stand in for {value} ({kind}): add a rule")


def built_functions(build: Path, original: Path | None = None) -> list[Function]:
    """The built template's functions, their layers and environment (long-form YAML).

    ``original``: the build ``build`` was copied from. A layer with no build step (the
    agents folder) is named relative to the build's folder, so it is found from there.
    """
    template = yaml.safe_load((build / "template.yaml").read_text())
    globals_ = template.get("Globals", {}).get("Function", {})
    functions = []
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        if "AWS_LAMBDA_EXEC_WRAPPER" in resource["Properties"].get("Environment", {}).get(
            "Variables", {}
        ):
            continue  # the stream function: an HTTP server behind the Web Adapter, no handler
        props = {**globals_, **resource["Properties"]}
        python_layers, data_layers = [], []
        for ref in [*globals_.get("Layers", []), *resource["Properties"].get("Layers", [])]:
            layer = template["Resources"][ref["Ref"]]
            uri = layer["Properties"]["ContentUri"]
            if str(layer.get("Metadata", {}).get("BuildMethod", "")).startswith("python"):
                python_layers.append((build / uri).resolve() / "python")
            else:
                data_layers.append(((original or build) / uri).resolve())
        variables = {
            **globals_.get("Environment", {}).get("Variables", {}),
            **resource["Properties"].get("Environment", {}).get("Variables", {}),
        }
        triggers = {event["Type"] for event in props.get("Events", {}).values()}
        kind = "http" if "HttpApi" in triggers else "sqs" if "SQS" in triggers else "schedule"
        functions.append(
            Function(
                name=logical_id.removesuffix("Function").lower(),
                logical_id=logical_id,
                module=props["Handler"].rpartition(".")[0],
                python_path=((build / props["CodeUri"]).resolve(), *python_layers),
                agents=data_layers[0] if data_layers else Path("/opt"),
                memory=int(props.get("MemorySize", 128)),
                variables={name: _fake(value, template) for name, value in variables.items()},
                kind=kind,
            )
        )
    return functions
