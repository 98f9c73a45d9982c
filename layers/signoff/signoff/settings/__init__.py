"""The deployment's settings: every ``SIGNOFF_*`` variable, read in this one package.

``template.yaml`` sets them for the functions (the local stack sets the same for
its in-process functions). A function reads them once, at its cold start
(``Deployment.from_env()`` in ``signoff.aws``), and hands the one value to every
builder; an adapter's own ``from_env`` reads them only when called alone (tests,
the CLI). An invalid value fails there, naming the variable; a missing one
fails in the builder that needs it (``Deployment.need``), naming it too.

:class:`Deployment` (``deployment``, a pydantic model) reads every variable; the
sweeper function, which only plans, reads its two with :class:`SweepPlanning`
(``variables``, no pydantic), parsed by the same functions. The names below are
imported on first use (PEP 562), so importing ``variables`` loads no pydantic.

It is a leaf (pydantic, errors and plugins only), so the composition root, the adapters and the core
can all take it without importing one another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.plugins import lazy_exports

if TYPE_CHECKING:
    from signoff.settings.deployment import (
        LAMBDA_MAX_TIMEOUT,
        LEASE_MARGIN,
        Deployment,
        secret_id_variable,
    )
    from signoff.settings.variables import SweepPlanning

__all__ = [
    "LAMBDA_MAX_TIMEOUT",
    "LEASE_MARGIN",
    "Deployment",
    "SweepPlanning",
    "secret_id_variable",
]

_HOMES = {
    "LAMBDA_MAX_TIMEOUT": "deployment",
    "LEASE_MARGIN": "deployment",
    "Deployment": "deployment",
    "secret_id_variable": "deployment",
    "SweepPlanning": "variables",
}

__getattr__ = lazy_exports(__name__, _HOMES)
