"""LinearLayout: its algebra checked against a plain reference (XOR of basis vectors) on seeded
random layouts, and its queries on small layouts whose answers are known by hand."""

import random

import pytest

from naiad.backends.nvidia.layouts import LinearLayout

INS = ("register", "lane", "warp", "block")


def random_layout(rng, ins=INS, outs=None, bits=None, zero_rate=0.2):
    """A random layout: each input bit a random vector (some zero) over random-size outputs."""
    outs = outs or {f"dim{i}": 1 << rng.randrange(5) for i in range(rng.randrange(1, 4))}
    bits = bits or {n: rng.randrange(4) for n in ins}
    bases = {}
    for name in ins:
        bases[name] = [
            [0 if rng.random() < zero_rate else rng.randrange(size) for size in outs.values()]
            for _ in range(bits[name])
        ]
    return LinearLayout(bases, outs)


def reference_apply(layout, inputs):
    """The image of `inputs` by XOR-ing basis vectors, one coordinate at a time."""
    result = [0] * len(layout.out_dims)
    for name, value in inputs.items():
        for i, vector in enumerate(layout.bases(name)):
            if value >> i & 1:
                result = [a ^ b for a, b in zip(result, vector)]
    return tuple(result)


def random_inputs(rng, layout):
    return {n: rng.randrange(layout.in_dim_size(n)) for n in layout.in_dims}


def every_input(layout):
    """Every input of `layout` as a dict (the layouts here are small)."""
    inputs = [{}]
    for name in layout.in_dims:
        inputs = [dict(x, **{name: v}) for x in inputs for v in range(layout.in_dim_size(name))]
    return inputs


def random_bijection(rng, names, total_bits):
    """A random invertible layout from `names` (bits split at random) onto dim0 x dim1."""
    while True:
        columns = [rng.randrange(1, 1 << total_bits) for _ in range(total_bits)]
        layout = _from_columns(rng, names, columns, total_bits)
        if layout.is_invertible():
            return layout


def _from_columns(rng, names, columns, total_bits):
    low = rng.randrange(total_bits + 1)
    outs = {"dim0": 1 << low, "dim1": 1 << (total_bits - low)}
    cut = sorted(rng.randrange(len(columns) + 1) for _ in range(len(names) - 1))
    bounds = [0, *cut, len(columns)]
    bases = {}
    for k, name in enumerate(names):
        bases[name] = [[c & ((1 << low) - 1), c >> low] for c in columns[bounds[k] : bounds[k + 1]]]
    return LinearLayout(bases, outs)


@pytest.fixture
def rng():
    return random.Random(1234)


def test_apply_is_the_xor_of_the_bases(rng):
    for _ in range(50):
        layout = random_layout(rng)
        for _ in range(20):
            inputs = random_inputs(rng, layout)
            assert layout.apply(**inputs) == reference_apply(layout, inputs)


def test_a_documented_example():
    layout = LinearLayout({"register": [[0, 1]], "lane": [[0, 2], [1, 0]]}, {"dim0": 2, "dim1": 4})
    assert layout.apply(register=1, lane=3) == (1, 3)
    assert layout.apply(lane=2) == (1, 0)
    assert layout.out_shape == {"dim0": 2, "dim1": 4}
    assert layout.in_shape == {"register": 2, "lane": 4}


def test_out_sizes_are_inferred_from_the_bases():
    layout = LinearLayout({"lane": [[1, 0], [0, 4]]}, ["dim0", "dim1"])
    assert layout.out_shape == {"dim0": 2, "dim1": 8}


def test_product_places_the_outer_layout_above_the_inner(rng):
    for _ in range(40):
        inner = random_layout(rng, ins=("register", "lane"))
        outs = {n: 1 << rng.randrange(3) for n in inner.out_dims[::-1]}
        outs["extra"] = 2
        outer = random_layout(rng, ins=("lane", "warp"), outs=outs)
        product = inner * outer
        assert product.in_dims == ("register", "lane", "warp")
        assert product.out_dims == (*inner.out_dims, "extra")
        for _ in range(10):
            x = random_inputs(rng, product)
            lane_inner = x["lane"] & (inner.in_dim_size("lane") - 1)
            lane_outer = x["lane"] >> inner.in_dim_size_log2("lane")
            a = dict(zip(inner.out_dims, inner.apply(register=x["register"], lane=lane_inner)))
            b = dict(zip(outer.out_dims, outer.apply(lane=lane_outer, warp=x["warp"])))
            expected = tuple(
                a.get(n, 0) ^ (b.get(n, 0) * inner.out_dim_size(n)) for n in product.out_dims
            )
            assert product.apply(**x) == expected


def test_identity_and_empty_are_units(rng):
    layout = random_layout(rng)
    assert layout * LinearLayout.empty() == layout
    assert LinearLayout.empty() * layout == layout
    identity = LinearLayout.empty()
    for name, size in layout.out_shape.items():
        identity = identity * LinearLayout.identity1d(size, name, name)
    assert layout.compose(identity) == layout
    flat = LinearLayout.identity({"dim0": 4, "dim1": 8}, "offset")
    assert flat.apply(offset=13) == (1, 3)  # 13 = 3 * 4 + 1: dim0 is minor


def test_compose_applies_one_layout_then_the_other(rng):
    for _ in range(40):
        first = random_layout(rng, ins=("register", "lane"))
        second_outs = {"dim0": 1 << rng.randrange(5), "dim1": 1 << rng.randrange(5)}
        second = random_layout(
            rng,
            ins=first.out_dims,
            outs=second_outs,
            bits={n: first.out_dim_size_log2(n) for n in first.out_dims},
        )
        composed = first.compose(second)
        for _ in range(10):
            x = random_inputs(rng, first)
            middle = dict(zip(first.out_dims, first.apply(**x)))
            assert composed.apply(**x) == second.apply(**middle)


def test_invert_is_a_two_sided_inverse(rng):
    for _ in range(30):
        layout = random_bijection(rng, ("register", "lane", "warp"), rng.randrange(1, 9))
        inverse = layout.invert()
        assert inverse.in_dims == layout.out_dims
        for x in every_input(layout)[:64]:
            y = dict(zip(layout.out_dims, layout.apply(**x)))
            back = dict(zip(inverse.out_dims, inverse.apply(**y)))
            assert back == {k: x[k] for k in layout.in_dims}


def test_pseudo_invert_is_a_right_inverse_choosing_free_bits_zero(rng):
    for _ in range(30):
        layout = random_layout(rng, zero_rate=0.3)
        if not layout.is_surjective():
            with pytest.raises(ValueError, match="not surjective"):
                layout.pseudo_invert()
            continue
        right = layout.pseudo_invert()
        masks = layout.free_variable_masks()
        for y in every_input(right)[:64]:
            x = dict(zip(right.out_dims, right.apply(**y)))
            assert layout.apply(**x) == tuple(y[n] for n in layout.out_dims)
            assert all(x[n] & masks[n] == 0 for n in layout.in_dims)


def test_invert_and_compose_finds_who_holds_each_element(rng):
    for _ in range(30):
        total = rng.randrange(1, 8)
        target = random_bijection(rng, ("register", "lane", "warp"), total)
        # A source holding a subset of the same elements, some of them twice.
        source = LinearLayout(
            {
                "register": [list(target.apply(lane=1))] if target.in_dim_size("lane") > 1 else [],
                "lane": [[0] * 2, list(target.apply(register=1 % target.in_dim_size("register")))],
            },
            target.out_shape,
        )
        plan = source.invert_and_compose(target)
        assert plan.in_dims == source.in_dims
        assert plan.out_dims == target.in_dims
        for x in every_input(source):
            held = dict(zip(plan.out_dims, plan.apply(**x)))
            assert target.apply(**held) == source.apply(**x)


def test_invert_and_compose_refuses_elements_the_target_lacks():
    source = LinearLayout({"register": [[1], [2]]}, {"dim0": 4})
    target = LinearLayout({"register": [[1], [0]]}, {"dim0": 4})
    with pytest.raises(ValueError, match="no preimage"):
        source.invert_and_compose(target)


def test_invert_refuses_a_layout_that_is_not_bijective():
    with pytest.raises(ValueError, match="not bijective"):
        LinearLayout({"lane": [[1], [0]]}, {"dim0": 2}).invert()


def test_transpose_and_reshape_of_outputs(rng):
    for _ in range(20):
        layout = random_layout(rng)
        order = list(layout.out_dims)
        rng.shuffle(order)
        moved = layout.transpose_outs(order)
        for _ in range(10):
            x = random_inputs(rng, layout)
            before = dict(zip(layout.out_dims, layout.apply(**x)))
            after = dict(zip(moved.out_dims, moved.apply(**x)))
            assert before == after
        flat = layout.flatten_outs()
        for _ in range(10):
            x = random_inputs(rng, layout)
            coords = layout.apply(**x)
            expected, scale = 0, 1
            for value, name in zip(coords, layout.out_dims):  # the first dimension is minor
                expected += value * scale
                scale *= layout.out_dim_size(name)
            assert flat.apply(**x) == (expected,)


def test_reshape_outs_splits_row_major_of_the_reversed_dimensions():
    layout = LinearLayout.identity1d(32, "offset", "flat")
    split = layout.reshape_outs({"dim1": 8, "dim0": 4})
    assert split.apply(offset=19) == (3, 2)  # 19 = 2 * 8 + 3
    with pytest.raises(ValueError, match="total size"):
        layout.reshape_outs({"dim0": 4})


def test_sublayout_restricts_inputs_and_projects_outputs(rng):
    layout = random_layout(rng, outs={"dim0": 8, "dim1": 16})
    sub = layout.sublayout(["lane", "register"], ["dim1"])
    assert sub.in_dims == ("lane", "register")
    assert sub.out_dims == ("dim1",)
    for _ in range(10):
        x = {"register": rng.randrange(layout.in_dim_size("register"))}
        x["lane"] = rng.randrange(layout.in_dim_size("lane"))
        assert sub.apply(**x) == (layout.apply(**x)[1],)


def test_transpose_ins_keeps_the_map(rng):
    layout = random_layout(rng)
    swapped = layout.transpose_ins(("warp", "block", "register", "lane"))
    x = random_inputs(rng, layout)
    assert swapped.apply(**x) == layout.apply(**x)
    assert swapped != layout or layout.total_in_bits == 0


def test_free_variable_masks_keep_each_element_once(rng):
    for _ in range(30):
        layout = random_layout(rng, zero_rate=0.4)
        masks = layout.free_variable_masks()
        kept = [x for x in every_input(layout) if all(x[n] & masks[n] == 0 for n in x)]
        images = [layout.apply(**x) for x in kept]
        all_images = {layout.apply(**x) for x in every_input(layout)}
        assert len(images) == len(set(images)) == len(all_images)


def test_zero_bases_mask_and_injectivity():
    layout = LinearLayout({"register": [[1]], "lane": [[2], [0], [4]], "warp": [[0]]}, {"dim0": 8})
    assert layout.zero_bases_mask("lane") == 0b010
    assert layout.zero_bases_mask("warp") == 1
    assert layout.zero_bases_mask("register") == 0
    assert not layout.is_injective()
    assert layout.is_surjective()
    assert layout.free_variable_masks() == {"register": 0, "lane": 0b010, "warp": 1}


def test_contiguous_registers_is_the_vector_width():
    layout = LinearLayout(
        {"register": [[0, 1], [0, 2], [1, 0], [0, 4]], "lane": [[0, 8]]},
        {"dim0": 2, "dim1": 16},
    )
    assert layout.contiguous_registers("dim1") == 4
    assert layout.contiguous_registers("dim0") == 1
    assert layout.contiguous_registers("dim1", "lane") == 1


def test_equality_hash_and_repr():
    a = LinearLayout({"register": [[1]], "lane": [[2]]}, {"dim0": 4})
    b = LinearLayout.identity1d(2, "register", "dim0") * LinearLayout.identity1d(2, "lane", "dim0")
    assert a == b
    assert hash(a) == hash(b)
    assert a != LinearLayout({"register": [[1]], "lane": [[2]]}, {"dim0": 8})
    assert repr(a) == "LinearLayout(-> dim0: 4\n  register: [[1]]\n  lane: [[2]])"


def test_zeros1d_broadcasts():
    layout = LinearLayout.zeros1d(4, "lane", "dim0")
    assert layout.bases("lane") == [(0,), (0,)]
    assert layout.out_dim_size("dim0") == 1


def test_invalid_layouts_are_refused():
    with pytest.raises(ValueError, match="power of two"):
        LinearLayout({"lane": []}, {"dim0": 3})
    with pytest.raises(ValueError, match="out of range"):
        LinearLayout({"lane": [[4]]}, {"dim0": 4})
    with pytest.raises(ValueError, match="needs 2 entries"):
        LinearLayout({"lane": [[1]]}, {"dim0": 4, "dim1": 2})
    layout = LinearLayout({"lane": [[1]]}, {"dim0": 2})
    with pytest.raises(ValueError, match="out of range"):
        layout.apply(lane=2)
    with pytest.raises(KeyError):
        layout.apply(warp=1)
    with pytest.raises(ValueError, match="do not match"):
        layout.compose(LinearLayout({"x": [[1]]}, {"dim0": 2}))


def test_packed_evaluation_agrees_with_apply(rng):
    for _ in range(20):
        layout = random_layout(rng)
        for _ in range(10):
            x = random_inputs(rng, layout)
            flat, shift = 0, 0
            for name in layout.in_dims:  # the first input dimension lowest
                flat |= x[name] << shift
                shift += layout.in_dim_size_log2(name)
            packed = layout.apply_flat(flat)
            assert packed == layout.apply_packed(x)
            unpacked = layout.flatten_outs().apply(**x)[0]
            assert unpacked == packed
