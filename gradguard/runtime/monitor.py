"""Ways in: `install()`, `uninstall()` and `with monitor():`, and the wrapper they put into torch.

Every backward and grad call goes through `torch.autograd._engine_run_backward` (Tensor.backward,
torch.autograd.backward/grad, names imported before install, LBFGS closures, GradScaler, checkpoint).
The wrapper records one small list per call (index, call site as code object + offset, root sequence
numbers, retain_graph, thread) and runs the engine inside `try`; only when autograd raises one of the
two errors gradguard explains does any analysis run. If the private name is missing, the public
`torch.autograd.backward` and `torch.autograd.grad` are wrapped instead.

The monitor's state lives on the installed wrapper itself (no module-level state): `_current()` finds
it through torch. Installation is reference counted: `install()` sets a flag, each `monitor()` context
adds one; torch is restored exactly when both are gone.
"""

from __future__ import annotations

import itertools
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from gradguard.analysis.api.torch_functions import (
    BACKWARD_CREATE,
    BACKWARD_FUNCTION,
    BACKWARD_RETAIN,
    BACKWARD_ROOTS,
    GRAD_CREATE,
    GRAD_FUNCTION,
    GRAD_OUTPUTS,
    GRAD_RETAIN,
)
from gradguard.analysis.api.torch_tensor import RETAIN_GRAPH
from gradguard.runtime.dynamo import DYNAMO, DynamoWatcher, exclude_gradguard
from gradguard.runtime.records import DONE, CallLog, CodeClassifier, to_record

MIN_TORCH = (2, 0)
STATE_ATTR = "__gradguard_state__"
ENGINE = "_engine_run_backward"

_LOCK = threading.RLock()


class MonitorUnavailable(ImportError):
    """torch is missing or too old for the runtime monitor (the linter does not need it)."""


def _import_torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise MonitorUnavailable(
            "gradguard: the runtime monitor needs torch>=2.0, which is not installed "
            "(gradguard lint works without it)"
        ) from exc
    version = str(getattr(torch, "__version__", "0"))
    parts = tuple(int(p) for p in version.split("+")[0].split(".")[:2] if p.isdigit())
    if parts < MIN_TORCH:
        raise MonitorUnavailable(
            f"gradguard: the runtime monitor needs torch>=2.0, found torch {version} "
            "(gradguard lint works without it)"
        )
    return torch


class _ThreadTokens(threading.local):
    """A number per thread that no later thread gets again: `threading.get_ident()` is reused as soon
    as a thread ends, and a new thread's autograd sequence numbers start again from zero, so records of
    a finished thread would otherwise pass for the new one's earlier calls."""

    _counter = itertools.count(1)

    def __init__(self) -> None:
        self.token = next(self._counter)


class _State:
    """Everything one installation owns. Reachable only through the wrapper installed in torch."""

    __slots__ = (
        "active",
        "classifier",
        "contexts",
        "deep",
        "deep_contexts",
        "deep_explicit",
        "diagnoses",
        "dynamo_excluded",
        "dynamo_watcher",
        "excepthook",
        "explaining",
        "explicit",
        "log",
        "patches",
        "threads",
        "torch",
    )

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.log = CallLog()
        self.classifier = CodeClassifier()
        self.explicit = False
        self.contexts = 0
        self.deep_explicit = False
        self.deep_contexts = 0
        self.deep: Any = None
        self.active = True
        self.patches: list[tuple[Any, str, Any]] = []
        self.diagnoses: deque[tuple[str, Any]] = deque(maxlen=16)
        self.dynamo_excluded = False
        self.excepthook: Callable[..., Any] | None = None
        self.dynamo_watcher: DynamoWatcher | None = None
        # One diagnosis at a time: errors on several threads at once are explained in turn (and
        # CPython 3.11's ast.parse is not safe to run from several threads at once).
        self.explaining = threading.RLock()
        self.threads = _ThreadTokens()

    # -- error path -------------------------------------------------------------------------------

    def on_error(self, exc: RuntimeError, raw: list, roots: Any, frame: FrameType | None) -> None:
        """Attach a diagnosis to `exc` when it is one of the errors gradguard explains. Never raises.

        Under torch.compile the whole error path runs with dynamo disabled: dynamo would otherwise try
        to trace the analysis (dataclass constructors are generated code it does not skip).
        """
        if DYNAMO in sys.modules:
            try:
                handler = self.torch.compiler.disable(self._handle_error)
            except Exception:  # noqa: BLE001 - an older torch.compiler: handle it directly
                handler = self._handle_error
        else:
            handler = self._handle_error
        try:
            handler(exc, raw, roots, frame)
        except Exception:  # noqa: BLE001 - the original error must propagate untouched
            return

    def _handle_error(self, exc: RuntimeError, raw: list, roots: Any, frame: FrameType | None) -> None:
        from gradguard.runtime import render
        from gradguard.runtime.diagnosis import error_kind

        try:
            args = exc.args
            message = args[0] if args and isinstance(args[0], str) else ""
            kind = error_kind(message)
            if kind is None or render.has_gradguard_note(exc):
                return
        except Exception:  # noqa: BLE001 - an exotic exception object: leave it alone
            return
        diagnosis = None
        try:
            from gradguard.runtime.explain import Failure, explain

            failure = Failure(
                message=message,
                record=to_record(raw),
                roots=tuple(roots),
                frame=frame,
                records=self.log.snapshot(),
                classifier=self.classifier,
                caller=self.classifier.first_outside(sys._getframe()),
                held_roots=self.deep.held() if self.deep is not None else (),
            )
            with self.explaining:
                diagnosis = _thread_caveat(explain(failure, kind), failure.record, failure.records)
            note = render.note_text(diagnosis)
        except Exception as error:  # noqa: BLE001 - the original error must propagate untouched
            diagnosis = None
            note = render.failure_note(error)
        finally:
            failure = None  # type: ignore[assignment]
        try:
            exc.add_note(note)
        except Exception:  # noqa: BLE001
            return
        if diagnosis is None:
            return
        self.diagnoses.append((note, diagnosis))
        self._attach_ipython(exc, diagnosis, note)

    def _attach_ipython(self, exc: BaseException, diagnosis: Any, note: str) -> None:
        ipython = sys.modules.get("IPython")
        if ipython is None:
            return
        try:
            if ipython.get_ipython() is None:
                return
            from gradguard.runtime.render import ipython_renderer

            exc._render_traceback_ = ipython_renderer(diagnosis, note)  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - rendering is a nicety
            return

    def diagnosis_for(self, exc: BaseException) -> Any:
        """The diagnosis attached to `exc` (matched by the identity of its note), if any."""
        notes = getattr(exc, "__notes__", None) or ()
        for note, diagnosis in reversed(self.diagnoses.copy()):
            if any(n is note for n in notes):
                return diagnosis
        return None

    def last_diagnosis(self) -> Any:
        """The most recent diagnosis of this installation, if any."""
        items = self.diagnoses.copy()
        return items[-1][1] if items else None

    # -- keeping dynamo out of gradguard -----------------------------------------------------------

    def exclude_from_dynamo(self) -> None:
        """Tell dynamo never to trace gradguard's code (done once `torch._dynamo` is imported)."""
        self.dynamo_excluded = True
        exclude_gradguard()


THREAD_CAVEAT = (
    "other threads ran backward calls too, and creation order is counted per thread, so the call named "
    "under `freed by` is a guess"
)


def _thread_caveat(diagnosis: Any, record: Any, records: Any) -> Any:
    """The diagnosis, saying it is not sure when the freeing call was inferred from creation order while
    other threads also freed graphs (a graph built on one thread and backward-ed on another cannot be
    ordered against this thread's calls)."""
    from dataclasses import replace

    if diagnosis.freed_by is None or diagnosis.freed_by_exact:
        return diagnosis
    if not any(other.thread != record.thread and other.frees_graph for other in records):
        return diagnosis
    hint = f"{diagnosis.hint}; {THREAD_CAVEAT}" if diagnosis.hint else THREAD_CAVEAT
    return replace(diagnosis, hint=hint)


def _is_traced(value: Any, torch: Any) -> bool:
    """True for fake/functional tensors seen while torch.compile or export traces a backward."""
    module = type(value).__module__ or ""
    if module.startswith(("torch._subclasses", "torch._functorch", "torch.fx")):
        return True
    try:
        return bool(torch.compiler.is_compiling())
    except Exception:  # noqa: BLE001
        return False


def _root_seqs(outputs: Any, torch: Any) -> tuple[int, ...] | None:
    """Sequence numbers of up to four roots (-1 without grad_fn); None while compile traces a backward."""
    tensor_type = torch.Tensor
    seqs = []
    for item in outputs[:4]:
        if isinstance(item, tensor_type):
            if type(item) is not tensor_type and _is_traced(item, torch):
                return None
            node = item.grad_fn
        else:
            node = getattr(item, "node", None)
        seqs.append(node._sequence_nr() if node is not None else -1)
    return tuple(seqs)


def _make_engine_wrapper(original: Callable[..., Any], state: _State) -> Callable[..., Any]:
    torch = state.torch
    tensor_type = torch.Tensor
    log_append = state.log.append
    next_index = state.log.next_index
    cache = state.classifier.cache
    classify = state.classifier.classify
    getframe = sys._getframe
    threads = state.threads
    modules = sys.modules
    on_error = state.on_error

    def _engine_run_backward(t_outputs: Any, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        if not state.active:
            return original(t_outputs, *args, **kwargs)
        if not state.dynamo_excluded and DYNAMO in modules:
            state.exclude_from_dynamo()
        if len(t_outputs) == 1 and type(t_outputs[0]) is tensor_type:
            node = t_outputs[0].grad_fn
            seqs: tuple[int, ...] | None = (node._sequence_nr() if node is not None else -1,)
        else:
            seqs = _root_seqs(t_outputs, torch)
            if seqs is None:
                return original(t_outputs, *args, **kwargs)
        # The caller is always torch.autograd.backward/grad: start one frame above it (every frame
        # object touched here costs a materialisation).
        try:
            frame = getframe(2)
        except ValueError:
            frame = None
        fallback = None
        while frame is not None:
            kind = cache.get(frame.f_code)
            if kind is None:
                kind = classify(frame.f_code)
            if kind == 0:
                break
            if kind == 1 and fallback is None:
                fallback = frame
            frame = frame.f_back
        if frame is None:
            frame = fallback
        retain = args[1] if len(args) > 1 else kwargs.get(RETAIN_GRAPH, False)
        raw = [
            next_index(),
            frame.f_code if frame is not None else None,
            frame.f_lasti if frame is not None else 0,
            seqs,
            retain,
            not kwargs.get("accumulate_grad", True),
            threads.token,
            False,
        ]
        log_append(raw)
        try:
            result = original(t_outputs, *args, **kwargs)
        except RuntimeError as exc:
            on_error(exc, raw, t_outputs, frame)
            raise
        raw[DONE] = True
        if state.deep is not None and not retain:
            state.deep.hold(raw[0], t_outputs)
        return result

    setattr(_engine_run_backward, STATE_ATTR, state)
    _engine_run_backward.__wrapped__ = original  # type: ignore[attr-defined]
    return _engine_run_backward


def _make_public_wrapper(original: Callable[..., Any], state: _State, *, is_grad: bool) -> Callable[..., Any]:
    """Fallback for a torch without `_engine_run_backward`: wrap `backward`/`grad` themselves."""
    log_append = state.log.append
    next_index = state.log.next_index
    user_frame = state.classifier.user_frame
    on_error = state.on_error
    (_, roots_keyword), (retain_position, retain_keyword), (create_position, create_keyword) = (
        (GRAD_OUTPUTS, GRAD_RETAIN, GRAD_CREATE) if is_grad else (BACKWARD_ROOTS, BACKWARD_RETAIN, BACKWARD_CREATE))

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        if not state.active:
            return original(*args, **kwargs)
        outputs = args[0] if args else kwargs.get(roots_keyword)
        if isinstance(outputs, state.torch.Tensor) or outputs is None:
            outputs = (outputs,) if outputs is not None else ()
        outputs = tuple(outputs)
        retain = args[retain_position] if len(args) > retain_position else kwargs.get(retain_keyword)
        if retain is None:
            retain = args[create_position] if len(args) > create_position else kwargs.get(create_keyword, False)
        frame = user_frame(sys._getframe(1))
        seqs = tuple(
            (t.grad_fn._sequence_nr() if getattr(t, "grad_fn", None) is not None else -1) for t in outputs[:4]
        )
        raw = [
            next_index(),
            frame.f_code if frame is not None else None,
            frame.f_lasti if frame is not None else 0,
            seqs,
            bool(retain),
            is_grad,
            state.threads.token,
            False,
        ]
        log_append(raw)
        try:
            result = original(*args, **kwargs)
        except RuntimeError as exc:
            on_error(exc, raw, outputs, frame)
            raise
        raw[DONE] = True
        if state.deep is not None and not retain:
            state.deep.hold(raw[0], outputs)
        return result

    wrapper.__name__ = original.__name__
    wrapper.__qualname__ = getattr(original, "__qualname__", original.__name__)
    wrapper.__doc__ = original.__doc__
    wrapper.__wrapped__ = original  # type: ignore[attr-defined]
    setattr(wrapper, STATE_ATTR, state)
    return wrapper


def _last(qualified: str) -> str:
    return qualified.rsplit(".", 1)[-1]


def _current(torch: Any) -> _State | None:
    """The state of the installed monitor, found through the patched function in torch."""
    autograd = torch.autograd
    for name in (ENGINE, _last(BACKWARD_FUNCTION)):
        state = getattr(getattr(autograd, name, None), STATE_ATTR, None)
        if isinstance(state, _State) and state.active:
            return state
    return None


def _patch(state: _State, target: str) -> None:
    torch = state.torch
    autograd = torch.autograd
    if target == "engine" and hasattr(autograd, ENGINE):
        original = getattr(autograd, ENGINE)
        wrapper = _make_engine_wrapper(original, state)
        graph = sys.modules.get("torch.autograd.graph")
        for owner in (autograd, graph):
            if owner is not None and getattr(owner, ENGINE, None) is original:
                state.patches.append((owner, ENGINE, original))
                setattr(owner, ENGINE, wrapper)
        return
    for function, is_grad in ((BACKWARD_FUNCTION, False), (GRAD_FUNCTION, True)):
        name = _last(function)
        original = getattr(autograd, name)
        state.patches.append((autograd, name, original))
        setattr(autograd, name, _make_public_wrapper(original, state, is_grad=is_grad))


def _unpatch(state: _State) -> None:
    state.active = False
    for owner, name, original in reversed(state.patches):
        current = getattr(owner, name, None)
        if getattr(current, STATE_ATTR, None) is state:
            setattr(owner, name, original)
    state.patches.clear()


def _set_deep(state: _State) -> None:
    wanted = state.deep_explicit or state.deep_contexts > 0
    if wanted and state.deep is None:
        from gradguard.runtime.deep import DeepRecorder

        state.deep = DeepRecorder(state.torch, state.classifier)
    elif not wanted and state.deep is not None:
        state.deep.close()
        state.deep = None


def _install_excepthook(state: _State) -> None:
    try:
        terminal = sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        terminal = False
    if not terminal or state.excepthook is not None:
        return
    from gradguard.runtime.render import make_excepthook

    previous = sys.excepthook
    state.excepthook = make_excepthook(previous, state.diagnosis_for)
    sys.excepthook = state.excepthook


def _remove_excepthook(state: _State) -> None:
    hook = state.excepthook
    if hook is not None and sys.excepthook is hook:
        sys.excepthook = hook.__gradguard_previous__  # type: ignore[attr-defined]
    state.excepthook = None


def _acquire(*, explicit: bool, deep: bool, target: str = "engine") -> _State:
    torch = _import_torch()
    with _LOCK:
        state = _current(torch)
        if state is None:
            state = _State(torch)
            _patch(state, target)
            if DYNAMO in sys.modules:
                state.exclude_from_dynamo()
            else:
                state.dynamo_watcher = DynamoWatcher(state.exclude_from_dynamo)
                state.dynamo_watcher.install()
            _install_excepthook(state)
        if explicit:
            state.explicit = True
            state.deep_explicit = state.deep_explicit or deep
        else:
            state.contexts += 1
            state.deep_contexts += int(deep)
        _set_deep(state)
        return state


def _release(state: _State, *, explicit: bool, deep: bool = False) -> None:
    with _LOCK:
        if explicit:
            state.explicit = False
            state.deep_explicit = False
        else:
            state.contexts = max(0, state.contexts - 1)
            state.deep_contexts = max(0, state.deep_contexts - int(deep))
        if state.explicit or state.contexts > 0:
            _set_deep(state)
            return
        state.deep_explicit = False
        state.deep_contexts = 0
        _set_deep(state)
        _remove_excepthook(state)
        if state.dynamo_watcher is not None:
            state.dynamo_watcher.remove()
            state.dynamo_watcher = None
        _unpatch(state)


def install(*, deep: bool = False) -> None:
    """Install the runtime monitor (idempotent: a second call does nothing more).

    With `deep=True`, also record creation sites of module outputs and hold the roots of the last few
    non-retaining backward calls, for more exact diagnoses at a measured cost (see the README).
    Raises `MonitorUnavailable` (an ImportError) when torch is missing or older than 2.0.
    """
    _acquire(explicit=True, deep=deep)


def uninstall() -> None:
    """Remove the monitor installed by `install()` and restore torch exactly as it was.

    Monitors opened with `with gradguard.monitor():` stay active until their block ends.
    Does nothing when the monitor is not installed or torch is not importable.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return
    with _LOCK:
        state = _current(torch)
        if state is not None:
            _release(state, explicit=True)


@contextmanager
def monitor(*, deep: bool = False) -> Iterator[None]:
    """Monitor backward calls inside the block; nests, and leaves an outer `install()` in place."""
    state = _acquire(explicit=False, deep=deep)
    try:
        yield
    finally:
        _release(state, explicit=False, deep=deep)


def is_installed() -> bool:
    """True when the monitor is active in this process (never imports torch)."""
    torch = sys.modules.get("torch")
    return torch is not None and _current(torch) is not None


def current_state() -> _State | None:
    """The active installation's state, for the runner and the IPython extension (or None)."""
    torch = sys.modules.get("torch")
    return _current(torch) if torch is not None else None
