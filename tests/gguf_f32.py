"""Convert a quantised GGUF into an all-float32 GGUF with the same weights (test helper).

``to_f32_gguf(src, dst)`` reads every metadata field and tensor of ``src`` with ``gguf.GGUFReader``,
de-quantises each tensor with ``gguf.quants.dequantize`` (the reference de-quantisation, the same one
transformers uses to load a GGUF), and writes ``dst`` with ``gguf.GGUFWriter``: every tensor as F32,
in the same order and shape, every metadata field copied with its type, ``general.file_type`` set to
``ALL_F32``. ``overrides`` replaces or adds fields (``{key: (value, GGUFValueType)}``), e.g.
``tokenizer.ggml.add_bos_token``. The file is written to ``dst.tmp`` and renamed, so a crash never
leaves a half file behind.

A llama.cpp server on the result computes in float32 with exactly the numbers transformers loads
from the quantised file, so the two can be compared at float32 noise (``test_scorer_served.py``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np


def _field_value(field) -> tuple[Any, Any, Any]:
    """``(value, type, sub_type)`` of a reader field, as ``GGUFWriter.add_key_value`` takes them."""
    from gguf import GGUFValueType

    types = field.types
    if types[0] == GGUFValueType.ARRAY:
        if len(types) != 2:  # nested arrays: not in the models this helper converts
            raise ValueError(f"{field.name}: nested array metadata {types} is not supported")
        return field.contents(), types[0], types[1]
    return field.contents(), types[0], None


def to_f32_gguf(src: Path, dst: Path, overrides: dict[str, tuple[Any, Any]] | None = None) -> Path:
    from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter, LlamaFileType
    from gguf.quants import dequantize

    reader = GGUFReader(src)
    arch = reader.fields["general.architecture"].contents()
    tmp = Path(str(dst) + ".tmp")
    writer = GGUFWriter(tmp, arch)
    fields = {
        name: _field_value(f)
        for name, f in reader.fields.items()
        if not name.startswith("GGUF.") and name != "general.architecture"
    }  # header / set by the writer
    fields["general.file_type"] = (int(LlamaFileType.ALL_F32), GGUFValueType.UINT32, None)
    for key, (value, vtype) in (overrides or {}).items():
        fields[key] = (value, vtype, None)
    for key, (value, vtype, sub) in fields.items():
        writer.add_key_value(key, value, vtype, sub)
    for t in reader.tensors:
        w = dequantize(t.data, t.tensor_type) if t.tensor_type != GGMLQuantizationType.F32 else t.data
        w = np.ascontiguousarray(w, dtype=np.float32)
        if tuple(w.shape[::-1]) != tuple(int(d) for d in t.shape):
            raise ValueError(f"{t.name}: de-quantised shape {w.shape[::-1]} != GGUF shape {tuple(t.shape)}")
        writer.add_tensor(t.name, w)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.replace(tmp, dst)
    return dst
