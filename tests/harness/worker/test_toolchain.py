"""The toolchain role's build steps (dicebench_harness.toolchain, precompiled_header):
- compile_first: the objects of the sources the fast path could not compile are built first, with
  torch's own commands from torch's build.ninja; a failure there is torch's error (its prefix, then
  ninja's output) without compiling the rest, and a success goes on to the whole build. Run with
  real ninja over a build.ninja of stand-in commands.
- the precompiled header: made with the flags of a build.ninja, published elsewhere (as the host
  does), then used by main.cpp's compile of a build with the same flags under another extension
  name (the compiler says it used it), and by none with other flags. Run with the real C++
  compiler over a small stand-in for torch/extension.h.
- the role's priority: a toolchain worker, and the compilers it starts, run below the priority of
  the process that started it (so candidates on the same cores come first)."""

import os
import shutil
import subprocess
import sys
import tempfile
import types
import unittest

from dicebench_harness import precompiled_header, toolchain

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
        steps = toolchain._NinjaSteps(extension, toolchain.FIRST_RULES["cuda_sources"], "")
        with self.assertRaises(RuntimeError) as raised:
            steps.run(self.root, False, "Error building extension 'ext'")
        message = str(raised.exception)
        self.assertTrue(message.startswith("Error building extension 'ext': "), message)
        self.assertIn('identifier "scale" is undefined', message)
        self.assertFalse(self.built("main.o"))  # the other sources were never compiled
        self.assertEqual(self.whole_builds, [])

    def test_a_passing_first_compile_goes_on_to_the_whole_build(self):
        extension = self.extension("touch $out", "touch $out")
        steps = toolchain._NinjaSteps(extension, toolchain.FIRST_RULES["cuda_sources"], "")
        steps.run(self.root, False, "Error building extension 'ext'")
        self.assertEqual(self.whole_builds, ["Error building extension 'ext'"])
        self.assertTrue(self.built("ext.so"))

    def test_the_other_sources_failing_still_fail_the_build(self):
        extension = self.extension("echo 'main.cpp: error'; false", "touch $out")
        steps = toolchain._NinjaSteps(extension, toolchain.FIRST_RULES["cuda_sources"], "")
        with self.assertRaises(RuntimeError):
            steps.run(self.root, False, "Error building extension 'ext'")
        self.assertTrue(self.built("cuda.cuda.o"))
        self.assertEqual(len(self.whole_builds), 1)

    def test_cpp_sources_first(self):
        extension = self.extension("echo 'main.cpp:2: error: expected'; false", "touch $out")
        steps = toolchain._NinjaSteps(extension, toolchain.FIRST_RULES["cpp_sources"], "")
        with self.assertRaises(RuntimeError) as raised:
            steps.run(self.root, False, "Error building extension 'ext'")
        self.assertIn("main.cpp:2: error: expected", str(raised.exception))
        self.assertFalse(self.built("cuda.cuda.o"))
        self.assertEqual(self.whole_builds, [])


CXX = shutil.which("c++") or shutil.which("g++")
PCH_NINJA = """ninja_required_version = 1.3
cxx = {cxx}
cflags = -DTORCH_EXTENSION_NAME={name} -DTORCH_API_INCLUDE_EXTENSION_H -isystem {include} -fPIC -std=c++17 {extra}
post_cflags = 
rule compile
  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out $post_cflags
build main.o: compile {root}/main.cpp
default main.o
"""


@unittest.skipUnless(CXX and shutil.which("ninja"), "no C++ compiler or ninja on PATH")
class PrecompiledHeaderTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="dicebench-pch-")
        self.include = os.path.join(self.root, "include")
        os.makedirs(os.path.join(self.include, "torch"))
        with open(os.path.join(self.include, "torch", "extension.h"), "w") as file:  # stands in for torch's
            file.write("#pragma once\n#include <vector>\n#include <string>\ninline int torch_like() { return 7; }\n")
        self.published = os.path.join(self.root, "pch")

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def build_folder(self, name, extra):
        folder = os.path.join(self.root, name)
        os.makedirs(folder)
        with open(os.path.join(folder, "build.ninja"), "w") as file:
            file.write(PCH_NINJA.format(cxx=CXX, name=name, include=self.include, extra=extra, root=folder))
        with open(os.path.join(folder, "main.cpp"), "w") as file:  # as load_inline writes it
            file.write("#include <torch/extension.h>\nint f() { return torch_like(); }\n")
        return folder

    def made_and_published(self, extra):
        """A header made with these flags, then published as the host does: moved elsewhere, the
        plain header written beside it. Its path."""
        maker = self.build_folder("dicebench_pch", extra)
        key = precompiled_header.make(maker, os.path.join(maker, "pch"))
        target = os.path.join(self.published, key)
        os.makedirs(target)
        os.rename(os.path.join(maker, "pch", "torch_extension.h.gch"), os.path.join(target, "torch_extension.h.gch"))
        with open(os.path.join(target, "torch_extension.h"), "w") as file:
            file.write(precompiled_header.STUB)
        return os.path.join(target, "torch_extension.h.gch")

    @staticmethod
    def edit_ninja(folder, old, new):
        path = os.path.join(folder, "build.ninja")
        with open(path) as file:
            ninja = file.read().replace(old, new, 1)
        with open(path, "w") as file:
            file.write(ninja)

    def compile_main(self, folder):
        """main.cpp's compile as torch's build runs it, with -H: the headers it read."""
        self.edit_ninja(folder, "$post_cflags", "$post_cflags -H")
        done = subprocess.run(["ninja", "-v"], cwd=folder, capture_output=True, text=True, check=False)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        return done.stdout + done.stderr

    def test_a_header_made_for_one_build_is_used_by_another_with_the_same_flags(self):
        header = self.made_and_published("-O2")
        same = self.build_folder("candidate_a", "-O2")
        self.assertTrue(precompiled_header.use(same, self.published))
        output = self.compile_main(same)
        self.assertIn(f"! {header}", output)

        other = self.build_folder("candidate_b", "-O1")
        self.assertFalse(precompiled_header.use(other, self.published))  # no header for its flags
        with open(os.path.join(other, "build.ninja")) as file:
            self.assertNotIn("-include", file.read())
        self.assertNotIn(".gch", self.compile_main(other))

    def test_a_header_the_compiler_finds_unfit_is_not_used_and_the_build_still_passes(self):
        header = self.made_and_published("-O2")
        # The same flags, but a macro the header reads defined differently in main.cpp's compile:
        # GCC refuses the precompiled header and compiles the plain one.
        folder = self.build_folder("candidate_c", "-O2")
        self.assertTrue(precompiled_header.use(folder, self.published))
        self.edit_ninja(folder, " -include ", " -DTORCH_API_INCLUDE_EXTENSION_H=2 -include ")
        output = self.compile_main(folder)
        self.assertIn(f"x {header}", output)  # refused
        self.assertNotIn("! ", output)

    def test_the_key_ignores_the_extension_name_only(self):
        def key(name, extra):
            return precompiled_header.key_of(precompiled_header.compile_flags(
                PCH_NINJA.format(cxx=CXX, name=name, include=self.include, extra=extra, root=self.root)))

        self.assertEqual(key("a", "-O3"), key("b", "-O3"))
        self.assertNotEqual(key("a", "-O3"), key("a", "-O2"))

    def test_a_failing_compile_raises_with_the_compilers_words(self):
        maker = self.build_folder("dicebench_pch", "-O2 -fno-such-flag-here")
        with self.assertRaises(RuntimeError) as raised:
            precompiled_header.make(maker, os.path.join(maker, "pch"))
        self.assertIn("no-such-flag-here", str(raised.exception))


class PriorityTest(unittest.TestCase):
    def niceness_of_a_compiler_it_starts(self, *asked: int) -> int:
        # In a child process: nice(2) cannot be undone here.
        program = ("import os, subprocess, sys\n"
                   "from dicebench_harness import toolchain\n"
                   "role = toolchain.ToolchainRole()\n"
                   "for niceness in sys.argv[1:]: role.lower_priority(int(niceness))\n"
                   "print(subprocess.run(['sh', '-c', 'cut -d\" \" -f19 /proc/$$/stat'],"
                   " capture_output=True, text=True, check=True).stdout.strip())\n")
        done = subprocess.run([sys.executable, "-c", program, *map(str, asked)], capture_output=True, text=True,
                              check=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        return int(done.stdout)

    def test_the_role_and_what_it_starts_run_at_the_niceness_a_build_asks_for(self):
        self.assertEqual(self.niceness_of_a_compiler_it_starts(10), min(19, os.nice(0) + 10))
        self.assertEqual(self.niceness_of_a_compiler_it_starts(10, 10), min(19, os.nice(0) + 10))  # not 20
        self.assertEqual(self.niceness_of_a_compiler_it_starts(0), os.nice(0))
        self.assertEqual(self.niceness_of_a_compiler_it_starts(), os.nice(0))


if __name__ == "__main__":
    unittest.main()
