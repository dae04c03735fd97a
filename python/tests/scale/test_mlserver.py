"""MLServer: `mlserver start` serving the digit classifier with tessera.mlserver.CoreMLRuntime,
over REST and gRPC on 127.0.0.1, stopped by the test."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import RESOURCES

pytest.importorskip("mlserver")
requests = pytest.importorskip("requests")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mlserver")
    http, grpc, metrics = _free_port(), _free_port(), _free_port()
    (folder / "settings.json").write_text(
        json.dumps({"host": "127.0.0.1", "http_port": http, "grpc_port": grpc, "metrics_port": metrics,
                    "parallel_workers": 0, "debug": False})
    )
    (folder / "model-settings.json").write_text(
        json.dumps({"name": "digits", "implementation": "tessera.mlserver.CoreMLRuntime",
                    "parameters": {"uri": os.path.join(RESOURCES, "DigitsClassifier.mlpackage")}})
    )
    mlserver = os.path.join(os.path.dirname(sys.executable), "mlserver")
    log = open(folder / "server.log", "w")
    process = subprocess.Popen([mlserver, "start", str(folder)], stdout=log, stderr=subprocess.STDOUT,
                               env=dict(os.environ), start_new_session=True)
    base = f"http://127.0.0.1:{http}"
    deadline = time.time() + 180
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError("mlserver exited:\n" + (folder / "server.log").read_text()[-3000:])
            try:
                if requests.get(f"{base}/v2/models/digits/ready", timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if time.time() > deadline:
                raise RuntimeError("mlserver did not become ready:\n" + (folder / "server.log").read_text()[-3000:])
            time.sleep(1)
        yield base, grpc
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        log.close()


def _samples():
    with open(os.path.join(RESOURCES, "digits-samples.json")) as file:
        return json.load(file)


def test_rest_infer(server):
    base, _ = server
    samples = _samples()
    pixels = np.array([sample["pixels"] for sample in samples["samples"]], np.float32) / 16
    body = {"inputs": [{"name": "image", "shape": list(pixels.shape), "datatype": "FP32", "data": pixels.reshape(-1).tolist()}]}
    response = requests.post(f"{base}/v2/models/digits/infer", json=body, timeout=60)
    assert response.status_code == 200, response.text
    outputs = {output["name"]: output for output in response.json()["outputs"]}
    assert outputs["classLabel"]["data"] == [sample["label"] for sample in samples["samples"]]
    probabilities = np.array(outputs["classLabel_probs"]["data"]).reshape(outputs["classLabel_probs"]["shape"])
    np.testing.assert_allclose(probabilities, [sample["probabilities"] for sample in samples["samples"]], rtol=1e-4, atol=1e-5)


def test_rest_bad_input_is_a_400_with_tesseras_message(server):
    base, _ = server
    body = {"inputs": [{"name": "image", "shape": [1, 63], "datatype": "FP32", "data": [0.0] * 63}]}
    response = requests.post(f"{base}/v2/models/digits/infer", json=body, timeout=60)
    assert response.status_code == 400
    assert "shape" in response.text


def test_grpc_infer(server):
    import grpc
    from mlserver.codecs import NumpyCodec
    from mlserver.grpc import dataplane_pb2_grpc
    from mlserver.grpc.converters import ModelInferRequestConverter, ModelInferResponseConverter
    from mlserver.types import InferenceRequest

    _, port = server
    samples = _samples()
    pixels = np.array([sample["pixels"] for sample in samples["samples"][:5]], np.float32) / 16
    request = InferenceRequest(inputs=[NumpyCodec.encode_input("image", pixels)])
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = dataplane_pb2_grpc.GRPCInferenceServiceStub(channel)
        reply = stub.ModelInfer(ModelInferRequestConverter.from_types(request, model_name="digits", model_version=None), timeout=60)
    response = ModelInferResponseConverter.to_types(reply)
    outputs = {output.name: output for output in response.outputs}
    labels = outputs["classLabel"].data.root if hasattr(outputs["classLabel"].data, "root") else outputs["classLabel"].data
    labels = [label.decode() if isinstance(label, bytes) else label for label in labels]
    assert labels == [sample["label"] for sample in samples["samples"][:5]]
