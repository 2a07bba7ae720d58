"""Seed rocrate-validator's HTTP cache with the RO-Crate JSON-LD context, so that it validates
offline (it fetches the context a crate names, and the network is not reachable here or in CI).

The context document is the one the ``rocrate`` library ships for the context URL it writes
(``rocrate/data/ro-crate.jsonld``), so the validator reads exactly the terms the crate was
written with. Runs in the tools environment (``requests_cache`` is rocrate-validator's own
dependency); it imports nothing else:

    .venv-tools/crate/bin/python oncoeval/export/validator_cache.py CACHE_PATH CONTEXT_FILE
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path


def seed(cache_path: str, context_file: str) -> str:
    import requests
    from requests_cache import CachedSession
    from urllib3 import HTTPResponse

    document = Path(context_file).read_bytes()
    url = json.loads(document)["@id"]
    session = CachedSession(
        cache_name=cache_path,
        backend="sqlite",
        expire_after=-1,
        allowable_methods=("GET",),
        allowable_codes=(200, 302, 404),
    )
    request = requests.Request("GET", url, headers={"Accept": "application/ld+json"}).prepare()
    headers = {"Content-Type": "application/ld+json"}
    response = requests.Response()
    response.status_code = 200
    response.url = url
    response.request = request
    response.headers.update(headers)
    response.raw = HTTPResponse(
        body=io.BytesIO(document), headers=headers, status=200, preload_content=False,
        request_url=url,
    )  # fmt: skip
    response._content = document
    session.cache.save_response(response)
    return url


if __name__ == "__main__":
    print(seed(sys.argv[1], sys.argv[2]))
