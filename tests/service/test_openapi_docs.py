"""The API documentation pages load only this server's files: every script, style and icon of
``/schema`` and ``/schema/scalar`` is a shipped file under ``/schema/assets`` (served, cached, and
byte for byte the pinned release ``service/data/README-openapi_ui.md`` lists), and the pages' policy
lets the browser fetch from nowhere else. (Rendering offline in Chromium: tests/service/web.)"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from litestar.testing import TestClient

from service.openapi import DOCS_ASSETS
from service.ops.page_headers import DOCS_POLICY

DATA = Path(__file__).resolve().parents[2] / "service" / "data"
_REFERENCES = re.compile(r"""(?:src|href)=["']([^"']+)["']""")


def test_the_docs_pages_load_only_shipped_files(client: TestClient) -> None:  # type: ignore[type-arg]
    for page in ("/schema/", "/schema/scalar"):
        answer = client.get(page)
        assert answer.status_code == 200
        assert answer.headers["content-security-policy"] == DOCS_POLICY
        references = _REFERENCES.findall(answer.text)
        assert len(references) >= 3, references
        for reference in references:
            assert reference.startswith(DOCS_ASSETS + "/"), f"{page} loads {reference}"
            asset = client.get(reference)
            assert asset.status_code == 200, reference
            assert "max-age=31536000" in asset.headers["cache-control"]
    assert "https:" not in DOCS_POLICY and "*" not in DOCS_POLICY


def test_the_shipped_files_are_the_pinned_releases() -> None:
    readme = (DATA / "README-openapi_ui.md").read_text(encoding="utf-8")
    listed = dict(re.findall(r"\| `([\w.-]+/[\w.-]+)` \| `([0-9a-f]{64})` \|", readme))
    files = {p.relative_to(DATA / "openapi_ui").as_posix(): p for p in (DATA / "openapi_ui").glob("*/*")}
    assert set(listed) == set(files)
    for name, path in files.items():
        assert hashlib.sha256(path.read_bytes()).hexdigest() == listed[name], name
    assert all(
        (DATA / "openapi_ui" / folder / "LICENSE").is_file() for folder in {n.split("/")[0] for n in files}
    )
