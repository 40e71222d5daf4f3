"""``paginate:`` against json-server: ``_page``/``_limit``, ``_start``/``_limit`` and its
``Link: rel="next"`` headers, over the seven records of ``events`` in db.json."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from agentkit import Progress, ToolExecutor, reporting_progress
from tests.declarative.backends.http.token_endpoint import serving
from tests.integration.conftest import MakeTool
from tests.support import loopback

EVENTS = """\
name: list_events
version: 1.0.0
input_schema:
  parameters:
    - {{name: start, type: integer, required: false}}
output_schema:
  parameters:
    - {{name: events, type: list, items: dictionary}}
    - {{name: truncated, type: boolean}}
    - {{name: next_cursor, type: string, required: false}}
backend:
  http:
    url: {origin}/events{query_string}
    query: {{_sort: id}}
    paginate:
      {kind}
      output: events
      max_pages: {max_pages}
"""

ALL = list(range(1, 8))


@pytest.mark.parametrize(
    ("kind", "query_string"),
    [
        pytest.param("page: {param: _page, size_param: _limit, size: 3}", "", id="page"),
        pytest.param("offset: {param: _start, size_param: _limit, size: 3}", "", id="offset"),
        pytest.param("link: {}", "?_page=1&_limit=3", id="link"),
    ],
)
def test_every_record_in_pages_of_three(
    make_tool: MakeTool, json_server: str, kind: str, query_string: str
) -> None:
    text = EVENTS.format(origin=json_server, query_string=query_string, kind=kind, max_pages=5)
    heard: list[Progress] = []
    with reporting_progress(heard.append):
        result = ToolExecutor().execute(make_tool(text), {})
    assert result.output is not None
    assert [event["id"] for event in result.output["events"]] == ALL
    assert result.output["truncated"] is False
    assert [step.done for step in heard] == [1, 2, 3]  # 3 + 3 + 1: the short page is the last


def test_a_truncated_list_tells_the_model_where_to_go_on(
    make_tool: MakeTool, json_server: str
) -> None:
    kind = 'offset: {param: _start, start: "{{ inputs.start }}", size_param: _limit, size: 3}'
    text = EVENTS.format(origin=json_server, query_string="", kind=kind, max_pages=1)
    tool = make_tool(text)
    executor = ToolExecutor()
    seen: list[int] = []
    arguments: dict[str, Any] = {}
    for _ in range(5):  # three calls are enough; more would be a bug
        output = executor.execute(tool, arguments).output
        assert output is not None
        seen += [event["id"] for event in output["events"]]
        if not output["truncated"]:
            break
        arguments = {"start": int(output["next_cursor"])}
    assert seen == ALL


PAGED_WITH_TOKEN = """\
name: list_pages
version: 1.0.0
credentials: [client-id, client-secret]
output_schema:
  parameters:
    - {{name: records, type: list}}
    - {{name: truncated, type: boolean}}
backend:
  http:
    url: {origin}/records
    auth:
      oauth2: {{token_url: {token_url}, client_id: client-id, client_secret: client-secret}}
    retry: {{attempts: 1}}
    paginate:
      page: {{param: page}}
      output: records
"""


def test_each_page_carries_the_token_and_a_revoked_one_is_refreshed_mid_way(
    make_tool: MakeTool,
) -> None:
    seen: list[tuple[str, str]] = []
    valid = {"token-1"}

    def pages(handler: loopback.Handler) -> None:
        page = int(dict(parse_qsl(urlsplit(handler.path).query)).get("page", "1"))
        sent = handler.headers.get("Authorization", "")
        seen.append((str(page), sent))
        if sent not in {f"Bearer {token}" for token in valid}:
            handler.reply(401, {"error": f"refused {sent}"})
            return
        if page == 1:
            valid.clear()  # revoked behind the cache's back, as page 2 will find
            valid.add("token-2")
        handler.reply(200, [{"page": page}] if page <= 3 else [])

    with serving() as endpoint, loopback.serve({"/records": pages}) as origin:
        endpoint.issue("token-1", "token-2", expires_in=3600)
        tool = make_tool(PAGED_WITH_TOKEN.format(origin=origin, token_url=endpoint.url))
        executor = ToolExecutor(
            credentials={"client-id": "agent-client", "client-secret": "s3cret-value"}
        )
        result = executor.execute(tool, {})
        assert endpoint.count == 2
    assert result.output == {"records": [{"page": 1}, {"page": 2}, {"page": 3}], "truncated": False}
    assert seen == [
        ("1", "Bearer token-1"),
        ("2", "Bearer token-1"),
        ("2", "Bearer token-2"),
        ("3", "Bearer token-2"),
        ("4", "Bearer token-2"),
    ]
