"""Finding the variable or attribute that brought a stale graph into the failing call.

Candidates come from the user frames above the failing call: their locals and shallow containers
first, then (only when that finds nothing convincing) the attributes of modules and plain objects
those frames hold, such as `self.h` on a model or `self.state` on a trainer. The same tensor seen
under several names is kept once, the other names becoming aliases.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from gradguard.analysis.api.packages import KNOWN

MAX_ITEMS = 64
MAX_MODULES = 2000
MAX_OBJECTS = 256

_SKIP_TYPES = (
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    type,
    str,
    bytes,
    int,
    float,
    bool,
    complex,
    range,
    types.CodeType,
    types.FrameType,
)


@dataclass
class Candidate:
    """A tensor found in the user's state, with the expression that reaches it.

    `group` is the variable or attribute holding it (`hidden` for `hidden[0]`), `container` says
    whether that holder is a tuple, list or dict of tensors. `owner`/`attribute` are set for tensors
    found as attributes of an object. Tensors are held only while a diagnosis is built.
    """

    expression: str
    group: str
    tensor: Any
    depth: int
    frame: FrameType | None
    owner: Any = None
    attribute: str | None = None
    container: str | None = None
    aliases: list[str] = field(default_factory=list)

    @property
    def is_attribute(self) -> bool:
        """True for a tensor reached through an object's attribute (`model.h`, `self.state[0]`)."""
        return self.owner is not None


TensorTest = Callable[[Any], bool]


def frame_locals(frame: FrameType) -> list[tuple[str, Any]]:
    """A frame's local variables, without leaving references behind.

    Before Python 3.13, reading `frame.f_locals` of a running function copies its locals into a dict
    cached on the frame, which then keeps every local value alive (a deleted activation, a loss) until
    the function returns. The cache is emptied again after copying; the next `locals()` call or tracer
    refills it from the real locals. Module and class frames are left alone: there `f_locals` is the
    namespace itself.
    """
    namespace = frame.f_locals
    items = list(namespace.items())
    if type(namespace) is dict and frame.f_code.co_flags & inspect.CO_OPTIMIZED:
        namespace.clear()
    return items


def frame_local(frame: FrameType, name: str) -> Any:
    """One local variable of a frame (None when unbound), read as `frame_locals` reads, leaving no reference."""
    return next((value for key, value in frame_locals(frame) if key == name), None)


def _tensor_items(value: Any, is_tensor: TensorTest) -> Iterator[tuple[str, Any, str]]:
    """(suffix, tensor, container kind) for tensors directly in a shallow container."""
    if isinstance(value, (tuple, list)) and len(value) <= MAX_ITEMS:
        kind = "tuple" if isinstance(value, tuple) else "list"
        for i, item in enumerate(value):
            if is_tensor(item):
                yield f"[{i}]", item, kind
            elif isinstance(item, (tuple, list)) and len(item) <= MAX_ITEMS:
                for j, inner in enumerate(item):
                    if is_tensor(inner):
                        yield f"[{i}][{j}]", inner, kind
    elif isinstance(value, dict) and len(value) <= MAX_ITEMS:
        for key, item in value.items():
            if isinstance(key, (str, int)) and is_tensor(item):
                yield f"[{key!r}]", item, "dict"


def _is_scannable_object(value: Any, module_type: type) -> bool:
    if isinstance(value, module_type):
        return True
    if isinstance(value, _SKIP_TYPES) or not hasattr(value, "__dict__"):
        return False
    owner_module = getattr(type(value), "__module__", "") or ""
    # An object of a library (a torch optimizer, a numpy array) holds no carrier of the user's.
    return owner_module.split(".", 1)[0] not in KNOWN


class Scanner:
    """Collects candidates from frames, then from the objects those frames hold."""

    def __init__(
        self, is_tensor: TensorTest, wanted: TensorTest, module_type: type, whole_types: tuple[type, ...] = ()
    ) -> None:
        self._is_tensor = is_tensor
        self._wanted = wanted
        self._module_type = module_type
        self._whole_types = whole_types
        self.objects_scanned = False
        self._by_id: dict[int, Candidate] = {}
        self.candidates: list[Candidate] = []
        self._objects: list[tuple[str, Any, int, FrameType]] = []
        self._seen_objects: set[int] = set()

    def _add(self, candidate: Candidate) -> None:
        key = id(candidate.tensor)
        existing = self._by_id.get(key)
        if existing is not None:
            if candidate.expression not in existing.aliases and candidate.expression != existing.expression:
                existing.aliases.append(candidate.expression)
            return
        self._by_id[key] = candidate
        self.candidates.append(candidate)

    def scan_frames(self, frames: Iterable[FrameType]) -> None:
        """Stage 1: locals of each frame and their shallow containers; objects are kept for later."""
        for depth, frame in enumerate(frames):
            for name, value in frame_locals(frame):
                if name.startswith("__") and name.endswith("__"):
                    continue
                self._scan_value(name, value, depth, frame)

    def _scan_value(self, name: str, value: Any, depth: int, frame: FrameType) -> None:
        if self._is_tensor(value):
            if self._wanted(value):
                self._add(Candidate(name, name, value, depth, frame))
            return
        for suffix, item, kind in _tensor_items(value, self._is_tensor):
            if self._wanted(item):
                self._add(Candidate(name + suffix, name, item, depth, frame, container=kind))
        if isinstance(value, self._whole_types):
            for item in self._attribute_tensors(value):
                self._add(Candidate(name, name, item, depth, frame))
            return
        if _is_scannable_object(value, self._module_type) and id(value) not in self._seen_objects:
            self._seen_objects.add(id(value))
            self._objects.append((name, value, depth, frame))

    def _attribute_tensors(self, obj: Any) -> list[Any]:
        """Wanted tensors held directly by an object kept whole (a torch.distributions object)."""
        try:
            values = list(vars(obj).values())
        except TypeError:
            return []
        return [v for v in values if self._is_tensor(v) and self._wanted(v)]

    def scan_objects(self, *, parameters: bool = False) -> None:
        """Stage 2: tensor attributes of the modules and objects found in stage 1 (and of the modules
        those objects hold, such as `self.model` on a trainer)."""
        self.objects_scanned = True
        budget = [MAX_MODULES]
        for name, obj, depth, frame in self._objects[:MAX_OBJECTS]:
            if isinstance(obj, self._module_type):
                self._scan_module(name, obj, depth, frame, parameters, budget)
                continue
            self._scan_attributes(name, obj, depth, frame, parameters=parameters)
            try:
                attributes = list(vars(obj).items())
            except TypeError:
                continue
            for attribute, value in attributes:
                if isinstance(value, self._module_type) and id(value) not in self._seen_objects:
                    self._seen_objects.add(id(value))
                    self._scan_module(f"{name}.{attribute}", value, depth, frame, parameters, budget)

    def _scan_module(
        self, name: str, module: Any, depth: int, frame: FrameType, parameters: bool, budget: list[int]
    ) -> None:
        for path, sub in module.named_modules():
            budget[0] -= 1
            if budget[0] < 0:
                return
            prefix = f"{name}.{path}" if path else name
            self._scan_attributes(prefix, sub, depth, frame, parameters=parameters)

    def _scan_attributes(self, prefix: str, obj: Any, depth: int, frame: FrameType, *, parameters: bool) -> None:
        try:
            attributes = dict(vars(obj))
        except TypeError:
            return
        extra: dict[str, Any] = {}
        for registry in ("_buffers", "_parameters") if parameters else ("_buffers",):
            table = attributes.get(registry)
            if isinstance(table, dict):
                extra.update(table)
        for attribute, value in list(attributes.items()) + list(extra.items()):
            if attribute.startswith("__"):
                continue
            expression = f"{prefix}.{attribute}"
            if self._is_tensor(value):
                if self._wanted(value):
                    self._add(Candidate(expression, expression, value, depth, frame, obj, attribute))
                continue
            if attribute in ("_parameters", "_buffers", "_modules"):
                continue
            if isinstance(value, self._whole_types):
                for item in self._attribute_tensors(value):
                    self._add(Candidate(expression, expression, item, depth, frame, obj, attribute))
                continue
            for suffix, item, kind in _tensor_items(value, self._is_tensor):
                if self._wanted(item):
                    self._add(
                        Candidate(expression + suffix, expression, item, depth, frame, obj, attribute, container=kind)
                    )
