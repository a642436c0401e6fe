"""Checks the fuzz stage adds to schemathesis's own (loaded through SCHEMATHESIS_HOOKS).

Every error answer must carry a `code` that openapi.yaml lists in `x-savedesk-errors`, with one of
the statuses listed for it; and a request schemathesis generated as valid may be refused only for a
reason the document cannot state (a 422, 404, 409… with a listed code), never as breaking the
document (a 400, or `too_long`).
"""
import json
import os

import schemathesis
import yaml

with open(os.environ["SAVEDESK_SPEC"], encoding="utf-8") as spec_file:
    ERRORS = yaml.safe_load(spec_file)["x-savedesk-errors"]

# Codes that say "this request breaks the document": never an answer to valid data.
BREAKS_THE_DOCUMENT = {code for code, entry in ERRORS.items() if entry["status"] == [400]} | {"too_long"}


@schemathesis.check
def error_codes_stated_in_spec(ctx, response, case):
    """An error answers in the envelope, with a code and status x-savedesk-errors lists."""
    if response.status_code < 400:
        return None
    try:
        body = json.loads(response.content)
    except ValueError:
        raise AssertionError(f"a {response.status_code} answer is not JSON: {response.content[:200]!r}")
    code = body.get("code") if isinstance(body, dict) else None
    if code not in ERRORS:
        raise AssertionError(f"error code {code!r} ({response.status_code}) is not listed in x-savedesk-errors")
    if response.status_code not in ERRORS[code]["status"]:
        raise AssertionError(f"{code} answered {response.status_code}; x-savedesk-errors lists {ERRORS[code]['status']}")
    meta = case.meta
    if meta is not None and meta.generation.mode.is_positive and code in BREAKS_THE_DOCUMENT:
        raise AssertionError(f"a request generated as valid was refused as breaking the document: {code}: {body.get('error')}")
    return None
