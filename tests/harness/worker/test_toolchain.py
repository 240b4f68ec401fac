"""The toolchain role's compile_first (dicebench_harness.toolchain): the objects of the sources the
fast path could not compile are built first, with torch's own commands from torch's build.ninja; a
failure there is torch's error (its prefix, then ninja's output) without compiling the rest, and a
success goes on to the whole build. Run with real ninja over a build.ninja of stand-in commands."""

import os
import shutil
import subprocess
import tempfile
import types
import unittest

from dicebench_harness import toolchain

BUILD_NINJA = """ninja_required_version = 1.3
rule compile
  command = {compile}
rule cuda_compile
  command = {cuda_compile}
rule link
  command = touch $out
build main.o: compile {root}/main.cpp
build cuda.cuda.o: cuda_compile {root}/cuda.cu
build ext.so: link main.o cuda.cuda.o
default ext.so
"""


@unittest.skipUnless(shutil.which("ninja"), "ninja is not on PATH")
class CompileFirstTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="dicebench-compile-first-")
        for name in ("main.cpp", "cuda.cu"):
            open(os.path.join(self.root, name), "w").close()
        self.whole_builds = []

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def extension(self, compile_command, cuda_command):
        """A stand-in for torch.utils.cpp_extension: its build.ninja written, its whole build a
        real `ninja` run that records it ran."""
        with open(os.path.join(self.root, "build.ninja"), "w") as file:
            file.write(BUILD_NINJA.format(compile=compile_command, cuda_compile=cuda_command, root=self.root))

        def run_whole(build_directory, verbose, error_prefix):
            self.whole_builds.append(error_prefix)
            done = subprocess.run(["ninja"], cwd=build_directory, capture_output=True, check=False)
            if done.returncode:
                raise RuntimeError(f"{error_prefix}: whole build")

        return types.SimpleNamespace(_run_ninja_build=run_whole, _get_num_workers=lambda verbose: None,
                                     SUBPROCESS_DECODE_ARGS=())

    def built(self, name):
        return os.path.exists(os.path.join(self.root, name))

    def test_a_failing_first_compile_is_torchs_error_and_nothing_else_compiles(self):
        extension = self.extension("touch $out", "echo 'cuda.cu(3): error: identifier \"scale\" is undefined'; false")
        toolchain._compile_first(extension, toolchain.FIRST_RULES["cuda_sources"])
        with self.assertRaises(RuntimeError) as raised:
            extension._run_ninja_build(self.root, False, "Error building extension 'ext'")
        message = str(raised.exception)
        self.assertTrue(message.startswith("Error building extension 'ext': "), message)
        self.assertIn('identifier "scale" is undefined', message)
        self.assertFalse(self.built("main.o"))  # the other sources were never compiled
        self.assertEqual(self.whole_builds, [])

    def test_a_passing_first_compile_goes_on_to_the_whole_build(self):
        extension = self.extension("touch $out", "touch $out")
        toolchain._compile_first(extension, toolchain.FIRST_RULES["cuda_sources"])
        extension._run_ninja_build(self.root, False, "Error building extension 'ext'")
        self.assertEqual(self.whole_builds, ["Error building extension 'ext'"])
        self.assertTrue(self.built("ext.so"))

    def test_the_other_sources_failing_still_fail_the_build(self):
        extension = self.extension("echo 'main.cpp: error'; false", "touch $out")
        toolchain._compile_first(extension, toolchain.FIRST_RULES["cuda_sources"])
        with self.assertRaises(RuntimeError):
            extension._run_ninja_build(self.root, False, "Error building extension 'ext'")
        self.assertTrue(self.built("cuda.cuda.o"))
        self.assertEqual(len(self.whole_builds), 1)

    def test_cpp_sources_first(self):
        extension = self.extension("echo 'main.cpp:2: error: expected'; false", "touch $out")
        toolchain._compile_first(extension, toolchain.FIRST_RULES["cpp_sources"])
        with self.assertRaises(RuntimeError) as raised:
            extension._run_ninja_build(self.root, False, "Error building extension 'ext'")
        self.assertIn("main.cpp:2: error: expected", str(raised.exception))
        self.assertFalse(self.built("cuda.cuda.o"))
        self.assertEqual(self.whole_builds, [])


if __name__ == "__main__":
    unittest.main()
