"""naiad.tools.mxfp (`triton.tools.mxfp` under the switch) against ml_dtypes' e2m1 and e8m0
types: decoding, rounding, packing order and the special values, on random inputs."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

from naiad.tools.mxfp import MXFP4Tensor, MXScaleTensor


def fp4_reference(codes: np.ndarray) -> np.ndarray:
    """ml_dtypes' float32 values of e2m1 codes held one per byte."""
    return codes.astype(np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float32)


def test_fp4_decodes_every_code_as_ml_dtypes():
    torch.manual_seed(0)
    codes = MXFP4Tensor(size=(64, 48)).random()
    assert codes.data.dtype == torch.uint8 and int(codes.data.max()) <= 15
    assert set(codes.data.unique().tolist()) == set(range(16))  # all sixteen drawn
    values = codes.to(torch.float32)
    expected = fp4_reference(codes.data.numpy())
    np.testing.assert_array_equal(values.numpy(), expected)
    # Both zeros keep their sign: code 8 is -0.0.
    assert np.array_equal(np.signbit(values.numpy()), np.signbit(expected))


def test_fp4_rounds_random_floats_as_ml_dtypes():
    rng = np.random.default_rng(1)
    values = np.concatenate(
        [
            rng.uniform(-7, 7, 4000),
            rng.uniform(-0.3, 0.3, 1000),  # around the subnormal 0.5 and zero
            np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]) * rng.choice([-1, 1], 7),  # ties
            [0.0, -0.0, 1e-30, -1e-30, 6.0, -6.0],
        ]
    ).astype(np.float32)
    codes = MXFP4Tensor(torch.from_numpy(values)).data.numpy()
    expected = values.astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
    np.testing.assert_array_equal(codes, expected)


def test_fp4_saturates_past_its_range_and_for_inf_and_nan():
    values = torch.tensor([7.0, -100.0, float("inf"), -float("inf"), float("nan"), -float("nan")])
    decoded = MXFP4Tensor(values).to(torch.float32)
    assert decoded.tolist() == [6.0, -6.0, 6.0, -6.0, 6.0, -6.0]


def test_fp4_round_trip_of_its_own_values():
    torch.manual_seed(2)
    codes = MXFP4Tensor(size=(1000,)).random()
    again = MXFP4Tensor(codes.to(torch.float32))
    assert torch.equal(again.data, codes.data)


@pytest.mark.parametrize("shape, dim", [((6, 10), 1), ((7, 5), 0), ((3, 5, 4), 1), ((9,), 0)])
def test_fp4_packing_puts_the_even_element_low(shape, dim):
    torch.manual_seed(3)
    codes = MXFP4Tensor(size=shape).random()
    packed = codes.to_packed_tensor(dim=dim)
    data = np.moveaxis(codes.data.numpy(), dim, -1)
    if data.shape[-1] % 2:
        data = np.concatenate([data, np.zeros(data.shape[:-1] + (1,), np.uint8)], axis=-1)
    expected = np.moveaxis(data[..., 0::2] | (data[..., 1::2] << 4), -1, dim)
    assert packed.dtype == torch.uint8
    np.testing.assert_array_equal(packed.numpy(), expected)
    unpacked = codes.unpack_packed_tensor(packed, dim, shape)
    assert torch.equal(unpacked, codes.data)


def test_scale_decodes_every_code_as_ml_dtypes():
    torch.manual_seed(4)
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    scales = MXScaleTensor(size=256)
    scales.data = codes
    values = scales.to(torch.float32).numpy()
    expected = codes.numpy().view(ml_dtypes.float8_e8m0fnu).astype(np.float32)
    np.testing.assert_array_equal(values, expected)  # 255 is NaN on both sides
    assert values[0] == np.float32(2.0**-127)


def test_scale_encodes_the_power_of_two_at_or_below():
    rng = np.random.default_rng(5)
    magnitudes = np.exp2(rng.uniform(-140, 127.5, 3000)).astype(np.float32)
    below_powers = np.nextafter(np.exp2(np.arange(-100, 100, 7.0)), 0).astype(np.float32)
    values = np.concatenate([magnitudes, below_powers, [2.0**-127, 2.0**127, 1.0]])
    values = values.astype(np.float32)
    codes = MXScaleTensor(torch.from_numpy(values)).data.numpy().astype(np.int64)
    exponents = np.floor(np.log2(values.astype(np.float64))).astype(np.int64)
    np.testing.assert_array_equal(codes, np.clip(exponents + 127, 0, 254))


def test_scale_of_what_is_not_a_positive_number_is_nan():
    values = torch.tensor([0.0, -0.0, -2.0, float("inf"), -float("inf"), float("nan")])
    assert MXScaleTensor(values).data.tolist() == [255] * 6


def test_random_scales_stay_within_their_bounds_and_never_nan():
    torch.manual_seed(6)
    everything = MXScaleTensor(size=(200, 50)).random().data
    assert int(everything.max()) <= 254 and int(everything.min()) >= 0
    bounded = MXScaleTensor(size=(4000,)).random(low=1 / 8, high=4.0)
    values = bounded.to(torch.float32)
    assert set(values.unique().tolist()) == {1 / 8, 1 / 4, 1 / 2, 1.0, 2.0, 4.0}
    with pytest.raises(ValueError):
        MXScaleTensor(size=3).random(low=4.0, high=1.0)


def test_construction_needs_data_or_size():
    with pytest.raises(ValueError):
        MXFP4Tensor()
    with pytest.raises(TypeError):
        MXScaleTensor([1.0, 2.0])
    with pytest.raises(ValueError):
        MXFP4Tensor(size=2).random().to(torch.float16)


@pytest.mark.parametrize("dim", [2, -1])
def test_packing_along_a_missing_dimension_is_refused_as_triton_refuses_it(dim):
    codes = MXFP4Tensor(size=(4, 6)).random()
    for error in (ValueError, AssertionError):
        with pytest.raises(error, match=f"dim {dim} is not a dimension"):
            codes.to_packed_tensor(dim=dim)
