"""``agentkit serve``: its options checked and made ``ServeOptions`` (stdio) or
``HttpOptions`` (``--http``), and the tools served, reloaded on SIGHUP and, with
``--reload``, when their files change."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentkit.cli.loading import choose_toolset, load_registry, load_toolsets, tool_paths
from agentkit.cli.output import echo
from agentkit.cli.status import EXIT_OK
from agentkit.problem import did_you_mean
from agentkit.toolerrors import SemanticError, UsageError

if TYPE_CHECKING:
    from agentkit.mcp.options import BearerToken
    from agentkit.mcp.reload import Reloader, ServedTools
    from agentkit.toolregistry import ToolRegistry
    from agentkit.toolsets import Toolset


_HTTP_ONLY = (
    ("no_whole_registry", "--no-whole-registry"),
    ("stateless", "--stateless"),
    ("no_fast_path", "--no-fast-path"),
    ("auth_token_file", "--auth-token-file"),
    ("auth_token_env", "--auth-token-env"),
    ("credential_header", "--credential-header"),
    ("require_credential_headers", "--require-credential-headers"),
    ("allowed_host", "--allowed-host"),
    ("allowed_origin", "--allowed-origin"),
    ("max_request_bytes", "--max-request-bytes"),
    ("header_timeout", "--header-timeout"),
    ("body_timeout", "--body-timeout"),
    ("idle_timeout", "--idle-timeout"),
    ("max_connections", "--max-connections"),
    ("caller_header", "--caller-header"),
    ("trusted_proxy", "--trusted-proxy"),
    ("metrics", "--metrics"),
)


def _positive(value: float | None, flag: str, *, integer: bool = False) -> None:
    if value is not None and not value > 0:
        kind = "a positive whole number" if integer else "a positive number of seconds"
        raise UsageError(f"{flag} takes {kind}, got {value}")


def _limits(args: argparse.Namespace) -> dict[str, Any]:
    """The options both transports share: deadlines, admission, draining, confirmation.

    Those not given are left out, for ``ServeOptions``' defaults."""
    _positive(args.call_timeout, "--call-timeout")
    _positive(args.max_calls, "--max-calls", integer=True)
    _positive(args.drain_seconds, "--drain-seconds")
    if args.max_queued is not None and args.max_queued < 0:
        raise UsageError(f"--max-queued takes 0 or a positive whole number, got {args.max_queued}")
    if args.max_waiting is not None:
        from agentkit.mcp.admission import MAX_WAITING

        if not 1 <= args.max_waiting <= MAX_WAITING:
            raise UsageError(
                f"--max-waiting takes a whole number from 1 to {MAX_WAITING}, "
                f"got {args.max_waiting}"
            )
    if args.answer_timeout is not None:
        from agentkit.context import ELICIT_SECONDS

        if not 0 < args.answer_timeout <= ELICIT_SECONDS:
            raise UsageError(
                f"--answer-timeout takes a number of seconds more than 0 and at most "
                f"{ELICIT_SECONDS:g}, got {args.answer_timeout:g}"
            )
    given = {
        "call_timeout": args.call_timeout,
        "max_calls": args.max_calls,
        "max_queued": args.max_queued,
        "max_waiting": args.max_waiting,
        "answer_timeout": args.answer_timeout,
        "drain_seconds": args.drain_seconds,
    }
    limits = {option: value for option, value in given.items() if value is not None}
    return {
        **limits,
        "allow_unconfirmed": args.allow_unconfirmed,
        "deferred": frozenset(args.defer or ()),
        **_audit(args),
    }


def _audit(args: argparse.Namespace) -> dict[str, Any]:
    """``--audit`` and its rotation, as ``ServeOptions`` takes them."""
    if args.audit is None:
        if args.audit_max_bytes is not None or args.audit_backups is not None:
            raise UsageError("--audit-max-bytes and --audit-backups apply with --audit FILE")
        return {}
    if args.audit_backups is not None and args.audit_backups < 0:
        raise UsageError(f"--audit-backups takes 0 or more, got {args.audit_backups}")
    given = {"audit_max_bytes": args.audit_max_bytes, "audit_backups": args.audit_backups}
    return {"audit": args.audit, **{key: value for key, value in given.items() if value}}


def _stdio_tools(args: argparse.Namespace) -> tuple[Reloader, ServedTools]:
    """What stdio serves: the registry, or the one set ``--toolset`` names (its deferred
    tools found by search); reloaded on SIGHUP and, with --reload, when the definition
    files change."""
    from agentkit.mcp.reload import Reloader

    toolsets = args.toolset or []
    if len(toolsets) > 1:
        raise UsageError(
            "over stdio, --toolset takes one set (a client starts a server of its own for "
            "each); serve several at once with --http, each at its own path"
        )
    if not toolsets:
        reloader = Reloader(lambda: load_registry(args), **_reloading(args))
        return reloader, reloader.served
    reloader, _ = _toolset_reloader(args)
    return reloader, reloader.sets[toolsets[0]]


def _toolset_reloader(args: argparse.Namespace) -> tuple[Reloader, list[str]]:
    """The registry (``.served``) and each toolset (``.sets``: those --toolset names,
    else every one defined), reloaded together; and the names of the toolsets defined
    when they were first loaded."""
    from agentkit.mcp.reload import Reloader

    defined: list[str] = []

    def sets(registry: ToolRegistry) -> dict[str, Toolset]:
        toolsets = load_toolsets(args, registry)
        defined[:] = toolsets
        chosen = [choose_toolset(toolsets, name) for name in args.toolset or toolsets]
        return {toolset.name: toolset for toolset in chosen}

    reloader = Reloader(lambda: load_registry(args), toolsets=sets, **_reloading(args))
    return reloader, list(defined)


def _check_token_toolsets(
    tokens: Sequence[str | BearerToken], served: Sequence[str], defined: Sequence[str]
) -> None:
    """Refuse a token restricted to a toolset no file defines (a typo: it would reach
    nothing); warn of one that is defined but not served here."""
    for token in tokens:
        if isinstance(token, str) or token.toolsets is None:
            continue
        for name in sorted(token.toolsets):
            if name not in defined:
                known = ", ".join(defined) or "none"
                raise UsageError(
                    f"{token.where}: toolsets={name}: no such toolset"
                    f"{did_you_mean(name, defined)}; defined: {known}"
                )
            if name not in served:
                echo(
                    f"warning: {token.where}: toolset '{name}' is not served here (served: "
                    f"{', '.join(served) or 'none'}); the token reaches no endpoint for it",
                    error=True,
                )


def _reloading(args: argparse.Namespace) -> dict[str, Any]:
    """How a server reloads: the files it watches, ``--reload`` and ``--reload-interval``
    (``Reloader``'s arguments after ``load``)."""
    from agentkit.declarative import definition_files

    _positive(args.reload_interval, "--reload-interval")
    paths = tool_paths(args)
    env_file = [Path(args.env_file)] if args.env_file else []

    def watched() -> list[Path]:
        # What loading reads, found the way loading finds it (hidden entries skipped).
        return [*definition_files(*paths)[0], *env_file]

    return {
        "files": watched,
        "watch": args.reload,
        "interval": args.reload_interval or 1.0,
        "roots": paths,  # a failed reload names its files to clients within these
    }


def cmd_serve(args: argparse.Namespace) -> int:
    _use_limits_store(args)
    if args.defer and (args.toolset or args.no_whole_registry):
        raise UsageError(
            "--defer applies to the whole registry, which --toolset and --no-whole-registry "
            "do not serve; a toolset defers tools in its document ('deferred:')"
        )
    if args.http is None:
        given = [flag for attribute, flag in _HTTP_ONLY if getattr(args, attribute)]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise UsageError(f"{', '.join(given)} only {verb} with --http HOST:PORT")
        try:
            import agentkit.mcp.server  # the SDK is installed
        except ImportError as exc:  # the mcp extra is not installed
            raise UsageError(
                "agentkit serve needs the MCP SDK: pip install 'agentkit[mcp]'"
            ) from exc
        from agentkit import mcp
        from agentkit.mcp.options import ServeOptions
        from agentkit.mcp.reload import EarlyHangups
        from agentkit.mcp.stdio_claim import claim_stdio

        options = ServeOptions(**_limits(args))
        # Claimed before the tools load (a module may print as it is imported), and
        # never given back: the process ends with serving, and a tool's thread or an
        # atexit hook writing to stdout after the last answer would reach the client.
        with claim_stdio(restore=False) as wire, EarlyHangups() as hangups:
            reloader, served = _stdio_tools(args)
            mcp.serve(
                served,
                options,
                credentials_file=args.credentials_file,
                reloader=reloader,
                wire=wire,
                hangups=hangups,
            )
        return EXIT_OK
    try:
        import agentkit.mcp.http_serving  # noqa: F401 -- the SDK and the HTTP server are installed
    except ImportError as exc:  # the serve extra is not installed
        raise UsageError(
            "agentkit serve --http needs the serve extra: pip install 'agentkit[serve]'"
        ) from exc
    from agentkit import mcp
    from agentkit.mcp import options as parse
    from agentkit.mcp.connections import check_body_timeout, check_limits

    limits = _limits(args)
    host, port = parse.parse_address(args.http)
    _positive(args.max_request_bytes, "--max-request-bytes", integer=True)
    header_timeout, idle_timeout, max_connections = check_limits(
        args.header_timeout, args.idle_timeout, args.max_connections
    )
    options = parse.HttpOptions(
        header_timeout=header_timeout,
        body_timeout=check_body_timeout(args.body_timeout),
        idle_timeout=idle_timeout,
        max_connections=max_connections,
        host=host,
        port=port,
        path=parse.parse_endpoint_path(args.path),
        whole_registry=not (args.no_whole_registry or args.toolset),
        stateless=args.stateless,
        fast_path=not args.no_fast_path,
        tokens=parse.read_tokens(file=args.auth_token_file, env=args.auth_token_env),
        credential_headers=parse.parse_credential_headers(args.credential_header or ()),
        require_credential_headers=args.require_credential_headers,
        allowed_hosts=tuple(map(parse.parse_allowed_host, args.allowed_host or ())),
        allowed_origins=tuple(map(parse.parse_allowed_origin, args.allowed_origin or ())),
        max_request_bytes=args.max_request_bytes or parse.DEFAULT_MAX_REQUEST_BYTES,
        caller_header=parse.parse_caller_header(args.caller_header) if args.caller_header else None,
        trusted_proxies=tuple(map(parse.parse_trusted_proxy, args.trusted_proxy or ())),
        metrics=args.metrics,
        **limits,
    )
    if options.trusted_proxies and not options.caller_header:
        raise UsageError(
            "--trusted-proxy names the peers whose --caller-header is honoured: "
            "give --caller-header HEADER too"
        )
    if options.caller_header and not options.trusted_proxies:
        raise UsageError(
            f"--caller-header {options.caller_header}: honoured only from a --trusted-proxy "
            "peer (a client could name anyone in it); give --trusted-proxy CIDR too"
        )
    reloader, defined = _toolset_reloader(args)
    if not options.whole_registry and not reloader.sets:
        raise UsageError(
            "--no-whole-registry leaves nothing to serve: no toolset is defined (a toolset "
            "is a document with a 'toolset:' key)"
        )
    _check_token_toolsets(options.tokens, list(reloader.sets), defined)
    _warn_unused_credential_headers(options.credential_headers, reloader.served.registry)
    mcp.serve(
        reloader.served,
        options,
        toolsets=reloader.sets,
        credentials_file=args.credentials_file,
        reloader=reloader,
    )
    return EXIT_OK


def _use_limits_store(args: argparse.Namespace) -> None:
    """``--limits-store``: count limits in a Redis the replicas share."""
    if args.limits_store is None:
        if args.limits_store_unreachable is not None:
            raise UsageError("--limits-store-unreachable applies with --limits-store URL")
        return
    from agentkit.ratelimits import use_store
    from agentkit.ratelimits_redis import RedisStore

    try:
        use_store(
            RedisStore(args.limits_store, unreachable=args.limits_store_unreachable or "refuse")
        )
    except SemanticError as exc:
        raise UsageError(f"--limits-store: {exc}") from None


def _warn_unused_credential_headers(headers: Mapping[str, str], tools: ToolRegistry) -> None:
    """Warn about a ``--credential-header`` naming a credential no tool takes (a typo)."""
    declared = {name for tool in tools for name in tool.credential_names}
    for header, credential in headers.items():
        if credential not in declared:
            hint = did_you_mean(credential, sorted(declared))
            echo(
                f"warning: --credential-header {header}={credential}: no tool takes the "
                f"credential '{credential}'{hint}, so the header never reaches a tool",
                error=True,
            )
