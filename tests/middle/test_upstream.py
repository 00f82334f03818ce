"""The xDSL check of tests/middle/upstream.py fails where it should: invalid text, ops xDSL
does not know spelled in the generic form, allowances not on its lists; and lets the
allowed ops through while checking what surrounds them."""

import pytest
from middle.upstream import XDSL_GENERIC_ONLY, XDSL_MISSING, assert_upstream_valid

VALID = """
func.func @f(%m: memref<4xf32>, %i: index) -> f32 {
  %x = memref.load %m[%i] : memref<4xf32>
  return %x : f32
}
"""


def test_valid_text_passes():
    assert_upstream_valid(VALID)


def test_xdsl_verifier_errors_fail_with_its_message():
    # Naiad's parser takes the wrong return type; xDSL's verifier refuses it.
    wrong = VALID.replace("-> f32 {", "-> i32 {")
    with pytest.raises(pytest.fail.Exception, match="xDSL rejects the text"):
        assert_upstream_valid(wrong)


def test_unknown_generic_ops_fail():
    text = '%0 = "foo.bar"() : () -> i32'
    with pytest.raises(pytest.fail.Exception, match=r"xDSL does not know 'foo\.bar'"):
        assert_upstream_valid(text)


def test_allowances_must_be_listed():
    with pytest.raises(pytest.fail.Exception, match="not in XDSL_MISSING or XDSL_GENERIC_ONLY"):
        assert_upstream_valid(VALID, allow={"memref.load"})


def test_allowed_ops_pass_and_their_surroundings_are_still_checked():
    text = """
    func.func @f(%p: memref<*xf32>, %o: index) -> f32 {
      %v = memref.reinterpret_cast %p to offset: [%o], sizes: [4], strides: [1]
        : memref<*xf32> to memref<4xf32, strided<[1], offset: ?>>
      %x = memref.load %v[%o] : memref<4xf32, strided<[1], offset: ?>>
      return %x : f32
    }
    """
    with pytest.raises(pytest.fail.Exception, match="should be of base attribute memref"):
        assert_upstream_valid(text)
    assert_upstream_valid(text, allow={"memref.reinterpret_cast"})
    broken = text.replace("-> f32 {", "-> i32 {")
    with pytest.raises(pytest.fail.Exception, match="xDSL rejects the text"):
        assert_upstream_valid(broken, allow={"memref.reinterpret_cast"})


def test_every_listed_op_says_why():
    for name, reason in {**XDSL_MISSING, **XDSL_GENERIC_ONLY}.items():
        assert "." in name and len(reason) > 10
