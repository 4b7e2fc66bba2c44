"""A person on an app page without a browser: Streamlit's own protocol over its websocket.

The load bench's editors stand for people whose browsers run on their own machines. On the
bench's two cores, four rendering browsers would take the processor the server needs, or,
made nicer, get too little of it to edit at a person's pace. This client sends the server
what a browser sends (a run of the page with the widgets' values, the URL's query string the
app last wrote) and reads what the server answers (every element of the run, as text), so
the server does a person's work and the bench's processor does almost nothing else.

Streamlit's messages: ``BackMsg.rerun_script`` (a ``ClientState``) from the client;
``ForwardMsg`` from the server (``new_session``, ``delta`` with elements, ``page_info_changed``
with the app's query string, ``script_finished``; an element sent before in the session may
come as a ``ref_hash`` to its first copy; ``navigation`` names the page the router ran, by
its script's hash, which later runs send back).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

#: element types that report a failure on the page
_ERROR_TYPES = ("exception",)


@dataclass
class Run:
    """What one run of the page drew: each element's text, its widgets, its errors."""

    texts: list[str] = field(default_factory=list)
    widgets: dict[str, str] = field(default_factory=dict)  # label -> widget id
    errors: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(self.texts)


class PageSession:
    """One person's session on one page of the app at ``url`` (``http://host:port``)."""

    def __init__(self, url: str, page: str) -> None:
        self.url, self.page = url, page
        self.query_string = ""
        self.page_script_hash = ""
        self.widgets: dict[str, str] = {}
        self.values: dict[str, str] = {}  # widget id -> the text the person typed
        self._sent: dict[str, ForwardMsg] = {}
        self._ws = None

    async def __aenter__(self) -> PageSession:
        import websockets

        host = urlsplit(self.url).netloc
        self._ws = await websockets.connect(
            f"ws://{host}/_stcore/stream",
            subprotocols=["streamlit"],
            max_size=None,
            open_timeout=None,
            ping_interval=None,
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._ws is not None:
            await self._ws.close()

    async def run(self, **typed: str) -> Run:
        """A run of the page, with the text areas labelled as ``typed``'s keys holding its
        values (labels as on the page; the first run types nothing)."""
        for label, value in typed.items():
            self.values[self.widgets[label]] = value
        msg = BackMsg()
        state = msg.rerun_script
        if self.page_script_hash:  # the page as the router named it in the first run
            state.page_script_hash = self.page_script_hash
        else:
            state.page_name = self.page
        state.query_string = self.query_string
        state.context_info.url = f"{self.url}/{self.page}"
        state.context_info.timezone = "UTC"
        state.context_info.locale = "en-US"
        for widget_id, value in self.values.items():
            state.widget_states.widgets.append(WidgetState(id=widget_id, string_value=value))
        await self._ws.send(msg.SerializeToString())
        return await self._read_run()

    async def _read_run(self) -> Run:
        run = Run()
        while True:
            fwd = ForwardMsg()
            fwd.ParseFromString(await self._ws.recv())
            kind = fwd.WhichOneof("type")
            if kind == "ref_hash":
                fwd = self._sent[fwd.ref_hash]
                kind = fwd.WhichOneof("type")
            elif fwd.hash:
                self._sent[fwd.hash] = fwd
            if kind == "navigation":
                self.page_script_hash = fwd.navigation.page_script_hash
            elif kind == "page_info_changed":
                self.query_string = fwd.page_info_changed.query_string
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                self._read_element(fwd.delta.new_element, run)
            elif kind == "script_finished":
                if fwd.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    run = Run()  # a newer run follows
                    continue
                self.widgets.update(run.widgets)
                return run

    @staticmethod
    def _read_element(element, run: Run) -> None:  # type: ignore[no-untyped-def]
        kind = element.WhichOneof("type")
        body = getattr(element, kind)
        if kind == "text_area":
            run.widgets[body.label] = body.id
        if kind in _ERROR_TYPES:
            run.errors.append(f"{body.type}: {body.message}"[:200])
        elif kind == "alert" and body.format == body.ERROR:
            run.errors.append(body.body[:200])
        for name in ("body", "label", "text"):
            value = getattr(body, name, None)
            if isinstance(value, str) and value:
                run.texts.append(value)


async def _demo(url: str) -> None:  # pragma: no cover - a manual check
    async with PageSession(url, "compare-captions") as person:
        first = await person.run()
        print(first.text()[-400:], first.errors, sorted(person.widgets))
        edited = await person.run(**{"Candidate caption (A)": "a dog on a beach at dusk"})
        print(edited.text()[-400:], edited.errors)


if __name__ == "__main__":  # pragma: no cover
    import sys

    asyncio.run(_demo(sys.argv[1]))
