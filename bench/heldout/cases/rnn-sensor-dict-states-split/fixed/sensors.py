import torch

SENSOR_DIMS = {"accel": 3, "gyro": 3, "baro": 1}


def simulate(batch_size, length):
    """Synthetic IMU + barometer streams and the altitude rate they imply."""
    data = {name: torch.randn(length, batch_size, dim) * 0.5 for name, dim in SENSOR_DIMS.items()}
    target = data["baro"][..., 0].cumsum(0) * 0.05 + data["accel"][..., 2] * 0.1
    return data, target
