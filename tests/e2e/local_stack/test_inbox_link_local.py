"""``signoff inbox --link`` with what ``signoff dev``'s banner exports, and nothing else:
the banner names the API's address and the signing secret's ARN with the table, so
the command run in another terminal prints a link that opens the approver's inbox."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import httpx

from tests.support.cli import signoff_cli
from tests.support.local_stack import WAIT, running_stack

if TYPE_CHECKING:
    from pathlib import Path


def test_the_banners_exports_are_all_inbox_link_needs(tmp_path: Path) -> None:
    from signoff_dev.cli.dev import _banner

    with running_stack() as stack:
        banner = _banner(stack)
        exported = dict(re.findall(r"\b([A-Z][A-Z0-9_]+)=(\S+)", banner.split("export ", 1)[1]))

        assert {"SIGNOFF_PUBLIC_URL", "SIGNOFF_RESUME_SIGNING_SECRET_ARN"} <= set(exported)
        done = signoff_cli(
            "inbox", "--link", "--approver", "approver@example.com", cwd=tmp_path, **exported
        )

        assert done.returncode == 0, done.stderr
        link = done.stdout.strip()
        assert link.startswith(f"{stack.url}/inbox?token=")
        with httpx.Client(timeout=WAIT) as http:
            page = http.get(link, headers={"accept": "text/html"})
        assert page.status_code == 200, page.text
        assert "approver@example.com" in page.text
