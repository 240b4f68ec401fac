"""The adaptive timing stop rule and statistics (dicebench_timing), with a fake timer and clock."""

import itertools
import math
import unittest

import numpy

import dicebench_timing as timing


class FakeTime:
    """A clock that only moves when the fake timer 'runs' a call for a given duration."""

    def __init__(self, durations_ms):
        self.now = 0.0
        self.durations = iter(durations_ms)
        self.calls = 0

    def clock(self):
        return self.now

    def timer(self, fn):
        fn()
        self.calls += 1
        duration = next(self.durations)
        self.now += duration / 1e3
        return duration


def run(durations, **params):
    fake = FakeTime(durations)
    defaults = dict(warmup=0, min_trials=1, max_trials=1000, budget_s=1e9, target_rel_ci=0.01)
    defaults.update(params)
    summary = timing.time_adaptive(lambda: None, timer=fake.timer, clock=fake.clock, **defaults)
    return summary, fake


class RanksTest(unittest.TestCase):
    def test_too_few_samples_have_no_interval(self):
        for n in range(0, 6):
            self.assertIsNone(timing.median_ci_ranks(n), n)

    def test_known_ranks(self):
        self.assertEqual(timing.median_ci_ranks(6), (1, 6))
        self.assertEqual(timing.median_ci_ranks(10), (2, 9))
        # the textbook 95% interval of the median for n = 100 is x(40)..x(61)
        self.assertEqual(timing.median_ci_ranks(100), (40, 61))

    def test_coverage_is_at_least_95_percent(self):
        for n in (6, 7, 20, 51, 300):
            j, k = timing.median_ci_ranks(n)
            below = sum(math.comb(n, i) for i in range(j)) / 2**n
            self.assertLessEqual(below, 0.025)
            self.assertEqual(k, n + 1 - j)
            # j is the largest such rank
            self.assertGreater(below + math.comb(n, j) / 2**n, 0.025)


class StopRuleTest(unittest.TestCase):
    def test_stops_early_when_stable(self):
        summary, _ = run(itertools.repeat(2.0), min_trials=10)
        self.assertEqual(summary["stop_reason"], "converged")
        self.assertEqual(summary["trials"], 10)
        self.assertEqual(summary["ci_rel"], 0.0)
        self.assertEqual(summary["median_ms"], 2.0)

    def test_no_garbage_collection_inside_the_loop(self):
        import gc

        seen = []
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            timing.time_adaptive(lambda: seen.append(gc.isenabled()), warmup=1, min_trials=3, max_trials=3,
                                 budget_s=10, before_each=lambda: seen.append(gc.isenabled()))
            self.assertEqual(gc.isenabled(), enabled)
        gc.enable()
        self.assertEqual(set(seen), {False})

    def test_needs_six_samples_for_an_interval(self):
        summary, _ = run(itertools.repeat(2.0), min_trials=1)
        self.assertEqual(summary["trials"], 6)
        self.assertEqual(summary["stop_reason"], "converged")

    def test_small_jitter_converges(self):
        # +-0.5% jitter: every order statistic within 1% of the median
        durations = itertools.cycle([1.0, 1.005, 0.995, 1.002, 0.998])
        summary, _ = run(durations, min_trials=5, target_rel_ci=0.01)
        self.assertEqual(summary["stop_reason"], "converged")
        self.assertLess(summary["trials"], 20)

    def test_runs_to_max_trials_when_noisy(self):
        summary, _ = run(itertools.cycle([1.0, 3.0]), min_trials=5, max_trials=200)
        self.assertEqual(summary["stop_reason"], "max_trials")
        self.assertEqual(summary["trials"], 200)
        self.assertGreater(summary["ci_rel"], 0.01)

    def test_respects_the_budget(self):
        # 125 ms calls, 1 s budget, 2 warm-ups: 0.25 s warm-up, then 6 trials reach 1.0 s
        summary, fake = run(itertools.repeat(125.0), warmup=2, min_trials=50, max_trials=500,
                            budget_s=1.0)
        self.assertEqual(summary["stop_reason"], "budget")
        self.assertEqual(summary["warmup"], 2)
        self.assertEqual(summary["trials"], 6)
        self.assertEqual(fake.calls, 8)

    def test_budget_cuts_warmup_short_but_one_trial_runs(self):
        summary, fake = run(itertools.repeat(500.0), warmup=100, min_trials=10, budget_s=1.0)
        self.assertEqual(summary["warmup"], 2)
        self.assertEqual(summary["trials"], 1)
        self.assertEqual(summary["stop_reason"], "budget")
        self.assertIsNone(summary["ci_rel"])

    def test_max_trials_wins_over_min_trials_rule(self):
        summary, _ = run(itertools.repeat(1.0), min_trials=3, max_trials=3)
        self.assertEqual(summary["trials"], 3)
        self.assertEqual(summary["stop_reason"], "max_trials")

    def test_before_each_runs_before_every_call(self):
        calls = []
        fake = FakeTime(itertools.repeat(1.0))
        timing.time_adaptive(lambda: calls.append("call"), warmup=2, min_trials=6, max_trials=6,
                             budget_s=100, timer=fake.timer, clock=fake.clock,
                             before_each=lambda: calls.append("before"))
        self.assertEqual(calls, ["before", "call"] * 8)

    def test_bad_parameters(self):
        with self.assertRaises(ValueError):
            run(itertools.repeat(1.0), min_trials=5, max_trials=4)
        with self.assertRaises(ValueError):
            run(itertools.repeat(1.0), budget_s=0)


class FreshInputNoise:
    """Durations like those of fresh-input timing: a median of 1 ms, each call within +-`spread` of it
    (a fixed pseudo-random draw), and now and then a slow outlier."""

    def __init__(self, spread, outlier_every=17, seed=1):
        self.rng = numpy.random.default_rng(seed)
        self.spread, self.outlier_every, self.count = spread, outlier_every, 0

    def __iter__(self):
        return self

    def __next__(self):
        self.count += 1
        if self.count % self.outlier_every == 0:
            return 1.5
        return 1.0 + float(self.rng.uniform(-self.spread, self.spread))


class SpreadStopTest(unittest.TestCase):
    """The host's eval.timing_spread is target_rel_ci: a stable series stops at min_trials, a noisy
    one runs to the budget (a fake clock: each call takes its duration plus 1 ms between calls)."""

    def run_with_gaps(self, durations, **params):
        fake = FakeTime(durations)
        gap = lambda: setattr(fake, "now", fake.now + 1e-3)  # noqa: E731 - the harness's work between calls
        defaults = dict(warmup=3, min_trials=10, max_trials=100, budget_s=2.0)
        defaults.update(params)
        summary = timing.time_adaptive(lambda: None, timer=fake.timer, clock=fake.clock, before_each=gap, **defaults)
        return summary, fake

    def test_the_default_spread_is_two_percent(self):
        import inspect

        self.assertEqual(inspect.signature(timing.time_adaptive).parameters["target_rel_ci"].default, 0.02)

    def test_a_stable_series_stops_at_min_trials(self):
        for jitter in (0.0, 0.002, 0.008):
            with self.subTest(jitter=jitter):
                summary, _ = self.run_with_gaps(FreshInputNoise(jitter), target_rel_ci=0.02)
                self.assertEqual(summary["stop_reason"], "converged")
                self.assertEqual(summary["trials"], 10)
                self.assertLessEqual(summary["ci_rel"], 0.02)

    def test_wider_jitter_converges_at_two_percent_sooner_than_at_one(self):
        # +-3% jitter: the interval of min_trials samples spans nearly all of it; it narrows below 2%
        # within a few dozen trials, below 1% only after several times as many.
        two, _ = self.run_with_gaps(FreshInputNoise(0.03), target_rel_ci=0.02)
        self.assertEqual(two["stop_reason"], "converged")
        self.assertLess(two["trials"], 40)
        one, _ = self.run_with_gaps(FreshInputNoise(0.03), target_rel_ci=0.01, max_trials=1000)
        self.assertGreater(one["trials"], 2 * two["trials"])

    def test_a_noisy_series_runs_to_the_budget(self):
        summary, fake = self.run_with_gaps(FreshInputNoise(0.3), target_rel_ci=0.02, max_trials=10000)
        self.assertEqual(summary["stop_reason"], "budget")
        self.assertGreater(summary["ci_rel"], 0.02)
        self.assertGreaterEqual(fake.now, 2.0)
        self.assertLess(fake.now, 2.0 + 0.01)


class WarmCallTest(unittest.TestCase):
    def test_a_warm_call_precedes_each_trial_and_is_not_timed(self):
        events = []
        fake = FakeTime(itertools.repeat(1.0))

        def timer(fn):
            events.append("timer")
            return fake.timer(fn)

        summary = timing.time_adaptive(lambda: events.append("call"), warmup=2, min_trials=6, max_trials=6,
                                       budget_s=100, timer=timer, clock=fake.clock,
                                       before_each=lambda: events.append("before"),
                                       after_each=lambda more: events.append(f"after:{more}"), warm_calls=True)
        self.assertEqual(summary["warm_calls"], 6)
        self.assertEqual(summary["trials"], 6)
        self.assertEqual(summary["warmup"], 2)
        self.assertEqual(fake.calls, 8)  # only warm-up and trials go through the timer
        warmups = ["before", "timer", "call", "after:True"] * 2
        trial = ["before", "call", "after:True", "before", "timer", "call"]
        self.assertEqual(events, warmups + (trial + ["after:True"]) * 5 + trial + ["after:False"])

    def test_warm_calls_stop_once_trials_are_long(self):
        fake = FakeTime(itertools.repeat(2 * timing.WARM_CALL_MAX_MS))
        calls = []
        summary = timing.time_adaptive(lambda: calls.append(1), warmup=0, min_trials=6, max_trials=6, budget_s=100,
                                       timer=fake.timer, clock=fake.clock, warm_calls=True)
        self.assertEqual(summary["warm_calls"], 1)  # before the first trial only
        self.assertEqual(len(calls), 7)

    def test_off_by_default(self):
        summary, fake = run(itertools.repeat(1.0), min_trials=6, max_trials=6)
        self.assertEqual(summary["warm_calls"], 0)
        self.assertEqual(fake.calls, 6)


class SummaryTest(unittest.TestCase):
    def test_statistics_match_numpy(self):
        samples = [3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0, 5.5, 3.5, 8.0]
        summary = timing.summarize(samples)
        self.assertAlmostEqual(summary["median_ms"], float(numpy.median(samples)))
        self.assertAlmostEqual(summary["mean_ms"], float(numpy.mean(samples)))
        self.assertAlmostEqual(summary["std_ms"], float(numpy.std(samples, ddof=1)))
        self.assertAlmostEqual(summary["p10_ms"], float(numpy.percentile(samples, 10)))
        self.assertAlmostEqual(summary["p90_ms"], float(numpy.percentile(samples, 90)))
        self.assertEqual((summary["min_ms"], summary["max_ms"], summary["trials"]), (1.0, 9.0, 11))
        # n = 11: ranks (2, 10) of the sorted samples -> [1.5, 8.0] around the median 4.0
        self.assertAlmostEqual(summary["ci_rel"], max(4.0 - 1.5, 8.0 - 4.0) / 4.0)

    def test_single_sample(self):
        summary = timing.summarize([2.0])
        self.assertEqual(summary["std_ms"], 0.0)
        self.assertEqual(summary["p10_ms"], 2.0)
        self.assertIsNone(summary["ci_rel"])

    def test_cpu_timer_measures_milliseconds(self):
        import time

        elapsed = timing.cpu_timer(lambda: time.sleep(0.02))
        self.assertGreaterEqual(elapsed, 19.0)
        self.assertLess(elapsed, 2000.0)
        self.assertIs(timing.timer_for_device("cpu"), timing.cpu_timer)


if __name__ == "__main__":
    unittest.main()
