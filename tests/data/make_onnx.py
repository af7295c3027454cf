#!/usr/bin/env python3
"""Writes the ONNX fixtures of the tests with ONNX's own helper (python3-onnx; the files are committed):

onnx/mlp.onnx          x [batch, 4, 8] -> MatMul W1 [8,16] -> Add b1 -> Relu -> MatMul W2 [16,8] -> Add b2 -> y,
                       the block PyTorch exports for two Linear layers; `batch` is a named dimension
onnx/mlp_data/         batch = 2: input_0.pb and output_0.pb (numpy in float64, rounded to float32)
onnx/bad/*.onnx        malformed models, each with the message `gexec validate` must give (bad/expected.tsv)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx")
BAD = os.path.join(HERE, "bad")


def model(nodes, inputs, outputs, inits=(), opset=17, name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="make_onnx.py")
    m.ir_version = 8
    return m


def mlp():
    rng = np.random.default_rng(7)
    w1 = (rng.standard_normal((8, 16)) * 0.3).astype(np.float32)
    b1 = (rng.standard_normal(16) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((16, 8)) * 0.3).astype(np.float32)
    b2 = (rng.standard_normal(8) * 0.1).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W1"], ["h0"], name="/fc1/MatMul"),
        helper.make_node("Add", ["h0", "b1"], ["h1"], name="/fc1/Add"),
        helper.make_node("Relu", ["h1"], ["h2"], name="/act/Relu"),
        helper.make_node("MatMul", ["h2", "W2"], ["h3"], name="/fc2/MatMul"),
        helper.make_node("Add", ["h3", "b2"], ["y"], name="/fc2/Add"),
    ]
    m = model(nodes,
              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4, 8])],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4, 8])],
              [numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(b1, "b1"),
               numpy_helper.from_array(w2, "W2"), numpy_helper.from_array(b2, "b2")], name="mlp")
    x = (rng.standard_normal((2, 4, 8))).astype(np.float32)
    h = np.maximum(x.astype(np.float64) @ w1 + b1, 0)
    y = (h @ w2 + b2).astype(np.float32)
    return m, x, y


def write(path, m):
    with open(path, "wb") as f:
        f.write(m.SerializeToString() if hasattr(m, "SerializeToString") else m)


def main():
    os.makedirs(BAD, exist_ok=True)
    os.makedirs(os.path.join(HERE, "mlp_data"), exist_ok=True)
    m, x, y = mlp()
    write(os.path.join(HERE, "mlp.onnx"), m)
    write(os.path.join(HERE, "mlp_data", "input_0.pb"), numpy_helper.from_array(x, "x"))
    write(os.path.join(HERE, "mlp_data", "output_0.pb"), numpy_helper.from_array(y, "y"))

    expected = []
    good = m.SerializeToString()

    def bad(name, data, message):
        write(os.path.join(BAD, name), data)
        expected.append(f"{name}\t{message}")

    bad("truncated.onnx", good[: len(good) // 2], "not an ONNX model: the protobuf does not parse")
    bad("garbage.onnx", bytes((i * 7919 + 13) % 251 for i in range(300)), "not an ONNX model: the protobuf does not parse")
    bad("empty.onnx", b"", "the ONNX model has no graph")
    relu = [helper.make_node("Relu", ["x"], ["y"])]
    io = ([helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    bad("opset_12.onnx", model(relu, *io, opset=12),
        "node 0 (Relu, opset 12): opset 12 of ai.onnx is outside the opsets gexec maps (13 to 21)")
    bad("opset_22.onnx", model(relu, *io, opset=22),
        "node 0 (Relu, opset 22): opset 22 of ai.onnx is outside the opsets gexec maps (13 to 21)")
    bad("unknown_op.onnx", model([helper.make_node("Softmax", ["x"], ["y"], name="sm")], *io),
        'node 0 "sm" (Softmax, opset 17): op Softmax is not supported')
    bad("custom_domain.onnx", model([helper.make_node("Relu", ["x"], ["y"], domain="com.example")], *io),
        'node 0 (Relu, opset ? of com.example): domain "com.example" is not ai.onnx')
    bad("gelu_opset_17.onnx", model([helper.make_node("Gelu", ["x"], ["y"])], *io),
        "node 0 (Gelu, opset 17): Gelu is in ai.onnx from opset 20")
    bad("unknown_attribute.onnx", model([helper.make_node("Relu", ["x"], ["y"], alpha=0.5)], *io),
        'node 0 (Relu, opset 17): attribute "alpha" is not supported (Relu takes none)')
    bad("double_input.onnx",
        model(relu, [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2, 3])],
              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2, 3])]),
        'node 0 (Relu, opset 17): X "x" is DOUBLE; gexec computes on FLOAT')
    bad("out_of_order.onnx",
        model([helper.make_node("Relu", ["t"], ["y"]), helper.make_node("Relu", ["x"], ["t"])], *io),
        'node 0 (Relu, opset 17): input "t" is not a graph input, an initializer or the output of an earlier node')
    w = numpy_helper.from_array(np.ones((3, 4), np.float32), "W")
    w.raw_data = w.raw_data[:-4]
    bad("short_raw_data.onnx",
        model([helper.make_node("MatMul", ["x", "W"], ["y"])], io[0],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], [w]),
        "raw_data holds 44 bytes; [3,4] FLOAT needs 48")
    e = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[3, 4])
    e.data_location = TensorProto.EXTERNAL
    e.external_data.add(key="location", value="../../secret.bin")
    bad("external_escapes.onnx",
        model([helper.make_node("MatMul", ["x", "W"], ["y"])], io[0],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], [e]),
        'external data location "../../secret.bin" leaves the model\'s folder')
    bad("open_dimension.onnx",
        model(relu, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])]),
        'graph input "x": dimension 0 "n" has no size; give it with --dim n=N')
    bad("transpose_computed.onnx",
        model([helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0])], io[0],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])]),
        'node 0 (Transpose, opset 17): Transpose of "x" [2,3] by perm [1,0], a value computed at run time')
    with open(os.path.join(BAD, "expected.tsv"), "w") as f:
        f.write("\n".join(expected) + "\n")


if __name__ == "__main__":
    main()
