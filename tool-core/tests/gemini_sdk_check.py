#!/usr/bin/env python3
"""Third-party check of the Gemini renderings with Google's own SDK models.

Reads the insta snapshots written by `format_types.rs` (one JSON object per
parameter type, keyed by format slug) and validates every Gemini rendering
with the `google-genai` package's pydantic models:

- `gemini*` entries: `types.FunctionDeclaration` and `types.Tool` (the
  `functionDeclarations` wrapper); unknown fields are errors there
  (`extra="forbid"`), and so is an unknown `Type` (its warning is raised).
- `gemini-json-schema` entries: `types.FunctionDeclaration`
  (`parametersJsonSchema`).

- the `functionResponse` parts of the Gemini round-trip snapshot
  (`format_roundtrip.rs`): `types.Part`.
- the `functionResponse` parts with media of `format_attachments.rs` (an
  image and a PDF as `inlineData`): `types.Part`, and each media part must
  read back as `FunctionResponsePart.inline_data` with its MIME type and bytes.

Refused renderings (`{"error": ...}`) are skipped: our own validator
already explains them. Exit status 0 when every rendering validates.

Usage (CI): pip install google-genai==<pinned>; python3 tool-core/tests/gemini_sdk_check.py
"""

import glob
import json
import os
import sys
import warnings

from google.genai import types

HERE = os.path.dirname(os.path.abspath(__file__))


def snapshot_body(path):
    """The JSON body of an insta snapshot (after its `---` front matter)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    parts = text.split("---\n", 2)
    if len(parts) != 3:
        raise ValueError(f"{path}: not an insta snapshot")
    return json.loads(parts[2])


def main():
    warnings.simplefilter("error")  # an unknown Type value only warns in the SDK
    paths = sorted(glob.glob(os.path.join(HERE, "snapshots", "format_types__*.snap")))
    if not paths:
        print("no snapshots found", file=sys.stderr)
        return 1
    checked = 0
    failures = []
    for path in paths:
        name = os.path.basename(path)
        for slug, rendered in snapshot_body(path).items():
            if not slug.startswith("gemini") or "error" in rendered:
                continue
            try:
                decl = types.FunctionDeclaration.model_validate(rendered)
                if slug == "gemini-json-schema":
                    if decl.parameters_json_schema is None:
                        raise ValueError("parametersJsonSchema missing")
                else:
                    if decl.parameters_json_schema is not None:
                        raise ValueError("unexpected parametersJsonSchema")
                    types.Tool.model_validate({"functionDeclarations": [rendered]})
                checked += 1
            except Exception as e:  # pylint: disable=broad-except
                failures.append(f"{name} [{slug}]: {e}")
    roundtrip = os.path.join(HERE, "snapshots", "format_roundtrip__roundtrip_gemini.snap")
    for entry in snapshot_body(roundtrip):
        for key in ("first", "later"):
            for part in entry[key]:
                try:
                    parsed = types.Part.model_validate(part)
                    if parsed.function_response is None:
                        raise ValueError("not a functionResponse part")
                    checked += 1
                except Exception as e:  # pylint: disable=broad-except
                    failures.append(f"roundtrip [{entry['call']['name']} {key}]: {e}")
    media = os.path.join(HERE, "snapshots", "format_attachments__attachments_gemini.snap")
    for entry in snapshot_body(media):
        for key in ("first", "later"):
            for part in entry[key]:
                try:
                    parsed = types.Part.model_validate(part)
                    response = parsed.function_response
                    if response is None:
                        raise ValueError("not a functionResponse part")
                    wanted = part["functionResponse"].get("parts", [])
                    got = response.parts or []
                    if len(got) != len(wanted):
                        raise ValueError(f"{len(wanted)} media parts sent, {len(got)} read")
                    for sent, read in zip(wanted, got):
                        blob = read.inline_data
                        if blob is None or blob.mime_type != sent["inlineData"]["mimeType"]:
                            raise ValueError(f"media part not read as inline data: {read}")
                        if not blob.data:
                            raise ValueError("inline data has no bytes")
                    if key == "first" and not got:
                        raise ValueError("the first rendering carries the media")
                    checked += 1
                except Exception as e:  # pylint: disable=broad-except
                    failures.append(f"attachments [{key}]: {e}")
    for failure in failures:
        print("FAIL", failure)
    print(f"{checked} passed, {len(failures)} failed")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
