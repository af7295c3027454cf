# Type stubs of the gexec module (python/src/module.cpp).
import builtins
from typing import Any, Mapping, Optional

__version__: str

class GraphError(ValueError):
    """A graph that does not load; one "SOURCE: /json/pointer: problem" line per problem."""
    # One (source, pointer, message) per line of the message; source and pointer are None where
    # the line has none (a JSON syntax error is placed by "LINE:COL: " at the start of its message).
    problems: list[tuple[Optional[str], Optional[str], str]]
    pointer: Optional[str]  # the first problem's JSON pointer

class RuntimeError(builtins.RuntimeError):
    """A failure setting up or running on the device, with the command line's message."""

class Graph:
    @staticmethod
    def load(path: str, dims: Mapping[str, int] = ...) -> Graph:
        """A graph file (JSON) or an ONNX model, told apart by content; dims sizes an ONNX model's named dimensions."""
    @staticmethod
    def from_onnx(data: bytes, base_dir: str = "", dims: Mapping[str, int] = ...) -> Graph:
        """An ONNX model from its serialized bytes; base_dir resolves external data."""
    @staticmethod
    def from_dict(graph: Mapping[str, Any], base_dir: str = "") -> Graph: ...
    @property
    def name(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def seed(self) -> Optional[int]: ...
    @property
    def inputs(self) -> list[str]: ...
    @property
    def outputs(self) -> list[str]: ...
    @property
    def tensors(self) -> dict[str, dict[str, Any]]: ...

class Array:
    """An output buffer gexec allocated: __dlpack__, and on CUDA __cuda_array_interface__."""
    def __dlpack__(
        self, *, stream: Optional[int] = None, max_version: Any = None, dl_device: Any = None, copy: Optional[bool] = None
    ) -> Any: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def ptr(self) -> int: ...
    def to_numpy(self) -> Any: ...

class Executor:
    def __init__(
        self,
        graph: Graph,
        backend: str = "auto",
        device: int = 0,
        passes: str = "default",
        seed: Optional[int] = None,
        *,
        atol: Optional[float] = None,
        rtol: Optional[float] = None,
        verify: str = "auto",
        samples: int = 4096,
        cuda_graph: bool = True,
        pad: str = "auto",
        residual_costs: str = "",
    ) -> None: ...
    def run(self, inputs: Mapping[str, Any] = ..., outputs: Optional[Mapping[str, Any]] = None) -> dict[str, Any]: ...
    def check(self) -> list[dict[str, Any]]: ...
    def time(
        self,
        iters: int = 100,
        *,
        warmup_iters: int = 10,
        warmup_ms: float = 0.0,
        cuda_graph: bool = True,
        profile: bool = False,
        peak_tflops: Optional[float] = None,
    ) -> dict[str, Any]: ...
    def synchronize(self) -> None: ...
    @property
    def selection(self) -> list[tuple[str, str]]: ...
    @property
    def backend(self) -> str: ...
    @property
    def device_name(self) -> str: ...
    @property
    def seed(self) -> int: ...
    @property
    def inputs(self) -> list[str]: ...
    @property
    def outputs(self) -> list[str]: ...
    @property
    def notes(self) -> list[str]: ...
    def gemm_commands(self) -> list[str]: ...
    @property
    def replaying(self) -> bool: ...
    @property
    def rebinds(self) -> int: ...
