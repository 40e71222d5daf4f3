"""The tools the MCP conformance suite calls by name, as Python backends (``make conformance``)."""

from __future__ import annotations

import asyncio
import io
import struct
import wave
import zlib
from typing import Any

from agentkit.content import Audio, Image, Output, Resource, Text
from agentkit.context import aelicit, elicit, log, report_progress


def simple_text() -> dict[str, Any]:
    return {"text": "This is a simple text response for testing."}


def error_handling() -> dict[str, Any]:
    raise RuntimeError("This tool intentionally returns an error for testing")


async def with_progress() -> dict[str, Any]:
    for done in (0, 50, 100):
        report_progress(done=done, total=100, message=f"{done}% done")
        await asyncio.sleep(0.05)
    return {"text": "Progress complete."}


async def with_logging() -> dict[str, Any]:
    log("info", "Tool execution started")
    await asyncio.sleep(0.05)
    log("info", "Tool processing data")
    await asyncio.sleep(0.05)
    log("info", "Tool execution completed")
    return {"text": "Logging complete."}


def with_elicitation(message: str) -> dict[str, Any]:
    """A sync tool: ``elicit`` waits in the executor's worker thread."""
    answer = elicit(
        message,
        {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        },
    )
    return {"text": f"User response: action={answer.action}, content={dict(answer.content)}"}


async def elicitation_defaults() -> dict[str, Any]:
    answer = await aelicit(
        "Please review and update the form fields with defaults",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "description": "Verified?", "default": True},
            },
        },
    )
    return {
        "text": f"Elicitation completed: action={answer.action}, content={dict(answer.content)}"
    }


def _titled(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"const": const, "title": title} for const, title in pairs]


async def elicitation_enums() -> dict[str, Any]:
    options = ["option1", "option2", "option3"]
    answer = await aelicit(
        "Please select options from the enum fields",
        {
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": options},
                "titledSingle": {
                    "type": "string",
                    "oneOf": _titled(
                        ("value1", "First Option"),
                        ("value2", "Second Option"),
                        ("value3", "Third Option"),
                    ),
                },
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {"type": "array", "items": {"type": "string", "enum": options}},
                "titledMulti": {
                    "type": "array",
                    "items": {
                        "anyOf": _titled(
                            ("value1", "First Choice"),
                            ("value2", "Second Choice"),
                            ("value3", "Third Choice"),
                        )
                    },
                },
            },
        },
    )
    return {
        "text": f"Elicitation completed: action={answer.action}, content={dict(answer.content)}"
    }


# -- content beyond JSON (agentkit.content) ------------------------------------------------------


def _png_pixel(red: int, green: int, blue: int) -> bytes:
    """A 1x1 PNG of one colour, made here so that the fixture is a real image."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    pixels = zlib.compress(bytes((0, red, green, blue)))  # filter byte, then the pixel
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def _wav_silence() -> bytes:
    """A tenth of a second of silence as 8 kHz mono 16-bit WAV."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(8000)
        sound.writeframes(b"\x00\x00" * 800)
    return buffer.getvalue()


RED_PIXEL = _png_pixel(255, 0, 0)


def image_content() -> Output:
    return Output(Image(data=RED_PIXEL, media_type="image/png"))


def audio_content() -> Output:
    return Output(Audio(data=_wav_silence(), media_type="audio/wav"))


def embedded_resource() -> Output:
    return Output(
        Resource(
            uri="test://embedded-resource",
            media_type="text/plain",
            text="This is an embedded resource content.",
        )
    )


def multiple_content_types() -> Output:
    return Output(
        Text("Multiple content types test:"),
        Image(data=RED_PIXEL, media_type="image/png"),
        Resource(
            uri="test://mixed-content-resource",
            media_type="application/json",
            text='{"test":"data","value":123}',
        ),
    )
