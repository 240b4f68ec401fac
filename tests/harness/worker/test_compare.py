"""Verdicts from compare.py: structure, shape, dtype, tolerances per mode and dtype, NaN/Inf."""

import unittest
from unittest import mock

import torch

from dicebench_harness import compare as compare_mod
from dicebench_harness.compare import compare, tolerance_for


class CompareTest(unittest.TestCase):
    def setUp(self):
        generator = torch.Generator().manual_seed(0)
        self.r = torch.randn(4, 6, generator=generator)

    def test_identical_is_correct(self):
        result = compare(self.r, self.r.clone(), "per_dtype")
        self.assertEqual(result, {"verdict": "correct", "max_abs_diff": 0.0,
                                  "mean_abs_diff": 0.0, "margin": 0.0, "message": ""})

    def test_fp32_tolerance_per_dtype(self):
        inside = self.r + 0.9e-4
        self.assertEqual(compare(self.r, inside, "per_dtype")["verdict"], "correct")
        outside = self.r.clone()
        outside[2, 3] += 1e-2
        result = compare(self.r, outside, "per_dtype")
        self.assertEqual(result["verdict"], "output_mismatch")
        self.assertAlmostEqual(result["max_abs_diff"], 1e-2, places=6)
        self.assertIn("output element [2, 3]", result["message"])
        self.assertIn("1 of 24 elements fail", result["message"])

    def test_relative_part_of_the_tolerance(self):
        r = torch.tensor([1000.0])
        # allowed = 1e-4 + 1e-4 * 1000 = 0.1001
        self.assertEqual(compare(r, r + 0.09, "per_dtype")["verdict"], "correct")
        self.assertEqual(compare(r, r + 0.2, "per_dtype")["verdict"], "output_mismatch")

    def test_uniform_mode_is_1e2_for_every_dtype(self):
        candidate = self.r + 5e-3
        self.assertEqual(compare(self.r, candidate, "per_dtype")["verdict"], "output_mismatch")
        self.assertEqual(compare(self.r, candidate, "uniform")["verdict"], "correct")
        far = self.r + 5e-2 + 1e-2 * self.r.abs()
        self.assertEqual(compare(self.r, far, "uniform")["verdict"], "output_mismatch")
        self.assertEqual(tolerance_for(torch.float64, "uniform"), 1e-2)

    def test_half_precision_tolerances(self):
        for dtype in (torch.float16, torch.bfloat16):
            r = torch.tensor([0.5, 1.0, -2.0], dtype=dtype)
            with self.subTest(dtype=dtype):
                self.assertEqual(tolerance_for(dtype, "per_dtype"), 1e-2)
                self.assertEqual(compare(r, r + 5e-3, "per_dtype")["verdict"], "correct")
                self.assertEqual(compare(r, r + 0.1, "per_dtype")["verdict"], "output_mismatch")

    def test_other_float_dtypes_use_1e4(self):
        r = torch.tensor([1.0], dtype=torch.float64)
        self.assertEqual(tolerance_for(torch.float64, "per_dtype"), 1e-4)
        self.assertEqual(compare(r, r + 1e-3, "per_dtype")["verdict"], "output_mismatch")

    def test_per_dtype_is_the_default_and_old_names_are_unknown(self):
        self.assertEqual(compare(self.r, self.r + 5e-3)["verdict"], "output_mismatch")
        for old in ("kernelbench", "compat"):
            with self.subTest(mode=old):
                with self.assertRaisesRegex(ValueError, "unknown tolerance mode"):
                    compare(self.r, self.r, old)

    def test_shape_mismatch(self):
        result = compare(self.r, self.r[:, :3], "per_dtype")
        self.assertEqual(result["verdict"], "shape_mismatch")
        self.assertIsNone(result["max_abs_diff"])
        self.assertIn("[4, 3]", result["message"])
        # same number of elements, other shape
        self.assertEqual(compare(self.r, self.r.reshape(6, 4), "per_dtype")["verdict"],
                         "shape_mismatch")

    def test_dtype_mismatch(self):
        result = compare(self.r, self.r.double(), "uniform")
        self.assertEqual(result["verdict"], "dtype_mismatch")
        self.assertIn("torch.float64", result["message"])

    def test_structure(self):
        pair = (self.r, self.r * 2)
        self.assertEqual(compare(pair, (self.r.clone(), self.r * 2), "per_dtype")["verdict"],
                         "correct")
        self.assertEqual(compare(pair, [self.r.clone(), self.r * 2], "per_dtype")["verdict"],
                         "correct", "tuple and list are the same kind")
        result = compare(self.r, (self.r, self.r), "per_dtype")
        self.assertEqual(result["verdict"], "shape_mismatch")
        self.assertIn("tuple of 2", result["message"])
        self.assertEqual(compare(pair, self.r, "per_dtype")["verdict"], "shape_mismatch")
        self.assertEqual(compare(pair, (self.r,), "per_dtype")["verdict"], "shape_mismatch")
        self.assertEqual(compare((self.r,), self.r, "per_dtype")["verdict"], "shape_mismatch")

    def test_nested_and_the_failing_path(self):
        reference = (self.r, (self.r + 1, self.r + 2))
        candidate = (self.r.clone(), (self.r + 1, self.r + 2.5))
        result = compare(reference, candidate, "per_dtype")
        self.assertEqual(result["verdict"], "output_mismatch")
        self.assertTrue(result["message"].startswith("output[1][1] element [0, 0]"), result["message"])
        self.assertAlmostEqual(result["max_abs_diff"], 0.5, places=5)
        # the mean runs over every element of every output: 24 of 72 elements differ by 0.5
        self.assertAlmostEqual(result["mean_abs_diff"], 0.5 / 3, places=5)

    def test_nested_shape_failure_is_reported_before_values(self):
        reference = (self.r, self.r)
        candidate = (self.r + 1, self.r[:2])
        result = compare(reference, candidate, "per_dtype")
        self.assertEqual(result["verdict"], "shape_mismatch")
        self.assertIn("output[1]", result["message"])

    def test_python_numbers_as_0d_tensors(self):
        self.assertEqual(compare(torch.tensor(2.5), 2.5, "per_dtype")["verdict"], "correct")
        self.assertEqual(compare(2.5, torch.tensor(2.5), "per_dtype")["verdict"], "correct")
        self.assertEqual(compare(3, torch.tensor(3), "per_dtype")["verdict"], "correct")
        self.assertEqual(compare(3, 4, "per_dtype")["verdict"], "output_mismatch")
        self.assertEqual(compare(torch.tensor(2.5), 2.5 + 1e-2, "per_dtype")["verdict"],
                         "output_mismatch")
        self.assertEqual(compare(torch.tensor([2.5]), 2.5, "per_dtype")["verdict"],
                         "shape_mismatch")
        self.assertEqual(compare(3, 3.0, "per_dtype")["verdict"], "dtype_mismatch")

    def test_integers_and_bools_exact(self):
        r = torch.tensor([1, 2, 3])
        self.assertEqual(compare(r, r.clone(), "uniform")["verdict"], "correct")
        result = compare(r, torch.tensor([1, 2, 4]), "uniform")
        self.assertEqual(result["verdict"], "output_mismatch")
        self.assertIn("element [2]", result["message"])
        self.assertEqual(result["max_abs_diff"], 1.0)
        b = torch.tensor([True, False])
        self.assertEqual(compare(b, b.clone(), "per_dtype")["verdict"], "correct")
        self.assertEqual(compare(b, ~b, "per_dtype")["verdict"], "output_mismatch")
        big = torch.tensor([2**62], dtype=torch.int64)
        self.assertEqual(compare(big, big + 1, "uniform")["verdict"], "output_mismatch",
                         "exactness does not go through float64")

    def test_nan_and_inf_rules(self):
        nan, inf = float("nan"), float("inf")
        r = torch.tensor([1.0, nan, inf, -inf])
        self.assertEqual(compare(r, r.clone(), "per_dtype")["verdict"], "correct",
                         "NaN and Inf where the reference has them")
        cases = {
            "candidate NaN where finite": torch.tensor([nan, nan, inf, -inf]),
            "candidate finite where NaN": torch.tensor([1.0, 0.0, inf, -inf]),
            "candidate Inf where finite": torch.tensor([inf, nan, inf, -inf]),
            "candidate -Inf where +Inf": torch.tensor([1.0, nan, -inf, -inf]),
            "candidate finite where Inf": torch.tensor([1.0, nan, 1e30, -inf]),
        }
        for name, candidate in cases.items():
            with self.subTest(name):
                result = compare(r, candidate, "uniform")
                self.assertEqual(result["verdict"], "output_mismatch")
                self.assertIn("must match the reference exactly", result["message"])
        finite = torch.tensor([1.0, 2.0])
        result = compare(finite, torch.tensor([1.0, nan]), "uniform")
        self.assertEqual(result["verdict"], "output_mismatch")
        self.assertEqual(result["max_abs_diff"], 0.0, "diffs only over elements finite on both sides")

    def test_complex(self):
        r = torch.tensor([1 + 1j, 2 - 1j], dtype=torch.complex64)
        self.assertEqual(compare(r, r.clone(), "per_dtype")["verdict"], "correct")
        self.assertEqual(compare(r, r + 1e-2j, "per_dtype")["verdict"], "output_mismatch")

    def test_unsupported_candidate_outputs(self):
        for candidate in ({"y": self.r}, "text", None, [self.r, object()]):
            with self.subTest(candidate=type(candidate).__name__):
                result = compare(self.r, candidate, "per_dtype")
                self.assertEqual(result["verdict"], "output_mismatch")
                self.assertIn("not plain tensors", result["message"])
        sparse = self.r.to_sparse()
        self.assertEqual(compare(self.r, sparse, "per_dtype")["verdict"], "output_mismatch")

    def test_margin_is_the_worst_element_against_its_allowance(self):
        ones = torch.ones(10, dtype=torch.float64)
        near = ones.clone()
        near[3] += 1e-4  # |c - r| = 1e-4 against atol + rtol * |r| = 2e-4
        self.assertAlmostEqual(compare(ones, near, "per_dtype")["margin"], 0.5, places=6)
        far = ones.clone()
        far[7] += 3e-4
        result = compare(ones, far, "per_dtype")
        self.assertEqual(result["verdict"], "output_mismatch")
        self.assertAlmostEqual(result["margin"], 1.5, places=6)
        nan = ones.clone()
        nan[0] = float("nan")
        self.assertIsNone(compare(ones, nan, "per_dtype")["margin"])
        self.assertIsNone(compare(ones, ones[:5], "per_dtype")["margin"])
        integers = torch.arange(5)
        self.assertEqual(compare(integers, integers.clone(), "per_dtype")["margin"], 0.0)
        self.assertIsNone(compare(integers, integers + 1, "per_dtype")["margin"])

    def test_empty_tensors(self):
        e = torch.empty(0, 3)
        self.assertEqual(compare(e, e.clone(), "per_dtype"),
                         {"verdict": "correct", "max_abs_diff": 0.0, "mean_abs_diff": 0.0,
                          "margin": 0.0, "message": ""})

    def test_chunked_comparison_finds_the_same_first_failure(self):
        r = torch.zeros(10, 10)
        c = r.clone()
        c[7, 3] = 1.0
        c[9, 9] = 2.0
        whole = compare(r, c, "per_dtype")
        with mock.patch.object(compare_mod, "CHUNK_ELEMENTS", 16):
            chunked = compare(r, c, "per_dtype")
        self.assertEqual(whole, chunked)
        self.assertIn("element [7, 3]", chunked["message"])
        self.assertIn("2 of 100 elements fail", chunked["message"])
        self.assertEqual(chunked["max_abs_diff"], 2.0)
        self.assertAlmostEqual(chunked["mean_abs_diff"], 0.03)

    def test_unknown_mode(self):
        with self.assertRaises(ValueError):
            compare(self.r, self.r, "loose")


if __name__ == "__main__":
    unittest.main()
