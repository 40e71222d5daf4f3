"""Redo the trimmed OpenAPI descriptions vendored in tests/fixtures/openapi/.

    npm install --prefix /tmp/oa @octokit/openapi@23.0.2 @readme/oas-examples@8.2.2
    python scripts/trim_openapi.py /tmp/oa/node_modules

GitHub's description (about 1,000 operations, 13 MB) is cut to the operations of a
few tags, with the components they reach through ``$ref`` and nothing else;
``x-webhooks`` and every ``example`` and ``examples`` go: they are the bulk of
the size, the import does not read them, and some are wrong (an array as the
example of a string), which a mock server would send back as the reply. From the
oas-examples collection every OpenAPI 3.0 and 3.1 JSON file under 100 KB is kept
whole (the larger ones, ``star-trek``, ``readme-legacy`` and ``readme``, repeat
shapes the others show).
The output is deterministic: the same package gives the same files.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "openapi"
#: The GitHub tags kept: small, self-contained, and GETs that need no state (meta & co.)
#: plus one large, realistic one (issues: bodies, pagination, nested outputs).
GITHUB_TAGS = (
    "codes-of-conduct",
    "emojis",
    "gitignore",
    "issues",
    "licenses",
    "markdown",
    "meta",
    "rate-limit",
)
#: oas-examples files larger than this are left out.
MAX_EXAMPLE = 100_000
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def refs(node: Any) -> set[str]:
    """Every local ``$ref`` in ``node``."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                found.add(ref)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def drop_examples(node: Any, *, names: bool = False) -> Any:
    """``node`` without ``example`` and ``examples`` anywhere (``names``: ``node`` maps
    property names to schemas, so its keys stay, even one named ``example``)."""
    if isinstance(node, dict):
        return {
            key: drop_examples(value, names=key == "properties" and not names)
            for key, value in node.items()
            if names or key not in ("example", "examples")
        }
    if isinstance(node, list):
        return [drop_examples(item) for item in node]
    return node


def trim_github(document: dict[str, Any], tags: tuple[str, ...]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for path, item in document["paths"].items():
        kept = {
            key: value
            for key, value in item.items()
            if key not in METHODS or set(value.get("tags", ())) & set(tags)
        }
        if any(method in kept for method in METHODS):
            paths[path] = drop_examples(kept)
    components: dict[str, dict[str, Any]] = {}
    todo = sorted(refs(paths))
    seen: set[str] = set()
    while todo:
        ref = todo.pop()
        if ref in seen:
            continue
        seen.add(ref)
        section, name = ref.removeprefix("#/components/").split("/", 1)
        node = drop_examples(document["components"][section][name])
        components.setdefault(section, {})[name] = node
        todo.extend(sorted(refs(node) - seen))
    trimmed = {key: document[key] for key in ("openapi", "info", "tags", "servers")}
    trimmed["tags"] = [tag for tag in document.get("tags", []) if tag.get("name") in tags]
    trimmed["paths"] = paths
    trimmed["components"] = {
        section: dict(sorted(components[section].items())) for section in sorted(components)
    }
    return trimmed


def main(node_modules: str) -> None:
    modules = Path(node_modules)
    octokit = modules / "@octokit" / "openapi"
    target = FIXTURES / "github"
    target.mkdir(parents=True, exist_ok=True)
    document = json.loads((octokit / "generated" / "api.github.com.json").read_text("utf-8"))
    trimmed = trim_github(document, GITHUB_TAGS)
    (target / "api.github.com.json").write_text(json.dumps(trimmed, indent=1) + "\n", "utf-8")
    shutil.copyfile(octokit / "LICENSE", target / "LICENSE")
    examples = modules / "@readme" / "oas-examples"
    for version in ("3.0", "3.1"):
        folder = FIXTURES / "oas-examples" / version
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        for spec in sorted((examples / version / "json").glob("*.json")):
            if spec.stat().st_size > MAX_EXAMPLE:
                continue
            shutil.copyfile(spec, folder / spec.name)
    shutil.copyfile(examples / "LICENSE.md", FIXTURES / "oas-examples" / "LICENSE.md")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "node_modules")
