// Flag mapping for the fast compile path (compile_flags.hpp).
#include "harness/fastpath/src/compile_flags.hpp"

#include <cctype>
#include <set>

namespace dicebench::fastpath {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// "sm_90", "compute_90", "sm_90a" -> "90" / "90a"; "" when not an architecture name.
std::string arch_number(std::string_view name) {
  for (std::string_view prefix : {"sm_", "compute_", "lto_"}) {
    if (starts_with(name, prefix)) return std::string(name.substr(prefix.size()));
  }
  return "";
}

std::string digits_of(std::string_view number) {
  std::string out;
  for (char c : number)
    if (std::isdigit(static_cast<unsigned char>(c))) out += c;
  return out;
}

// A -std value nvcc and NVRTC share.
bool known_std(std::string_view value) {
  return value == "c++11" || value == "c++14" || value == "c++17" || value == "c++20" || value == "c++03";
}

// A -O flag g++ takes: -O, -O<n>, -Os, -Oz, -Og, -Ofast.
bool gxx_optimization(std::string_view f) {
  std::string_view level = f.substr(2);
  return level.empty() || digits_of(level) == level || level == "s" || level == "z" || level == "g" || level == "fast";
}

struct Mapper {
  std::string gpu_arch;  // "sm_90"
  CompileFlags flags;
  std::string error;
  std::string nvcc_host_level;  // the last nvcc -O<n>: "3"

  bool fail(const std::string& what) {
    if (error.empty()) error = what;
    return false;
  }

  // An architecture the candidate names: fine when it is the GPU's (sm_90a picks the
  // arch-specific variant of the same GPU).
  bool take_arch(std::string_view name) {
    std::string wanted = arch_number(name);
    std::string ours = arch_number(gpu_arch);
    if (wanted.empty()) return fail("unsupported architecture name '" + std::string(name) + "'");
    if (digits_of(wanted) != digits_of(ours))
      return fail("the candidate compiles for " + std::string(name) + "; the fast path compiles for " + gpu_arch +
                  " only");
    if (wanted.size() > ours.size()) flags.arch = "sm_" + wanted;  // sm_90a, sm_90f
    return true;
  }

  bool take_gencode(std::string_view value) {
    // arch=compute_90,code=sm_90 or arch=compute_90,code=[sm_90,compute_90]
    std::string v(value);
    for (char& c : v)
      if (c == '[' || c == ']' || c == '"' || c == '\'') c = ' ';
    std::size_t pos = 0;
    while (pos < v.size()) {
      std::size_t comma = v.find(',', pos);
      std::string part = v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      pos = comma == std::string::npos ? v.size() : comma + 1;
      std::size_t eq = part.find('=');
      std::string item = eq == std::string::npos ? part : part.substr(eq + 1);
      std::string trimmed;
      for (char c : item)
        if (!std::isspace(static_cast<unsigned char>(c))) trimmed += c;
      if (trimmed.empty()) continue;
      if (!take_arch(trimmed)) return false;
    }
    return true;
  }

  void define(const std::string& d) {
    flags.nvrtc_options.push_back("-D" + d);
    flags.cuda_host_flags.push_back("-D" + d);
  }

  bool host_flag(const std::string& f, std::vector<std::string>& into, std::string& std_version) {
    static const std::set<std::string> ignored{"-fPIC",         "-fpic",         "-g",          "-g0",
                                               "-g1",           "-g2",           "-g3",         "-w",
                                               "-Wall",         "-Wextra",       "-pedantic",   "-Wpedantic",
                                               "-march=native", "-mtune=native", "-ffast-math", "-funroll-loops",
                                               "-pipe",         "-DNDEBUG",      "-Werror",     "-fno-strict-aliasing",
                                               "-shared"};
    if (f.empty() || ignored.count(f)) {
      if (f == "-DNDEBUG") into.push_back(f);
      return true;
    }
    if (starts_with(f, "-O")) {
      // g++ compiles the glue at the level torch's build would (see host_optimization).
      if (!gxx_optimization(f)) return fail("unsupported host compiler flag '" + f + "'");
      into.push_back(f);
      return true;
    }
    if (starts_with(f, "-Wno-") || starts_with(f, "-W")) return true;
    if (starts_with(f, "-std=")) {
      std::string value = f.substr(5);
      if (value.rfind("gnu++", 0) == 0) value = "c++" + value.substr(5);
      if (!known_std(value)) return fail("unsupported host flag " + f);
      std_version = value;
      return true;
    }
    if (f == "-fopenmp") {
      into.push_back(f);
      flags.link_flags.push_back(f);
      return true;
    }
    if ((starts_with(f, "-D") || starts_with(f, "-U")) && f.size() > 2) {
      into.push_back(f);
      return true;
    }
    return fail("unsupported host compiler flag '" + f + "'");
  }

  bool cuda_flags(const std::vector<std::string>& words) {
    for (std::size_t i = 0; i < words.size(); ++i) {
      const std::string& f = words[i];
      auto next = [&](std::string& value) {
        if (i + 1 >= words.size()) return fail("nvcc flag " + f + " without its value");
        value = words[++i];
        return true;
      };
      auto value_of = [&](std::string_view prefix, std::string& value) {
        // "-flag=value" or "-flag value"
        if (f.size() > prefix.size() && f[prefix.size()] == '=') {
          value = f.substr(prefix.size() + 1);
          return true;
        }
        return next(value);
      };
      std::string value;
      if (f.empty()) continue;
      if (starts_with(f, "-O")) {
        // nvcc's -O<n> is the host compiler's level (device code has -Xptxas -O); -O0 passes none.
        if (f.size() < 3 || digits_of(f.substr(2)) != f.substr(2)) return fail("unsupported nvcc flag '" + f + "'");
        nvcc_host_level = f.substr(2);
        continue;
      }
      if (f == "-g" || f == "--resource-usage" || f == "-res-usage" || f == "--expt-relaxed-constexpr" ||
          f == "-expt-relaxed-constexpr" || f == "-Wno-deprecated-gpu-targets" || f == "-Wno-deprecated-declarations" ||
          f == "--keep" || f == "-keep" || f == "-v" || f == "--verbose" || f == "-DNDEBUG" ||
          f == "--forward-unknown-to-host-compiler" || f == "-lineinfo=false") {
        if (f == "-DNDEBUG") define("NDEBUG");
        continue;
      }
      if (f == "--use_fast_math" || f == "-use_fast_math" || f == "--use-fast-math" || f == "-use-fast-math") {
        flags.nvrtc_options.push_back("--use_fast_math");
        continue;
      }
      if (f == "-lineinfo" || f == "--generate-line-info") {
        flags.nvrtc_options.push_back("--generate-line-info");
        continue;
      }
      if (f == "-G" || f == "--device-debug") {
        flags.nvrtc_options.push_back("--device-debug");
        continue;
      }
      if (f == "-w" || f == "--disable-warnings") {
        flags.nvrtc_options.push_back("--disable-warnings");
        continue;
      }
      if (f == "--expt-extended-lambda" || f == "-expt-extended-lambda" || f == "--extended-lambda" ||
          f == "-extended-lambda") {
        flags.nvrtc_options.push_back("--extended-lambda");
        continue;
      }
      if (starts_with(f, "-std") || starts_with(f, "--std")) {
        if (!value_of(starts_with(f, "--") ? "--std" : "-std", value)) return false;
        if (!known_std(value)) return fail("unsupported nvcc flag " + f);
        flags.cuda_std = value;
        continue;
      }
      if (starts_with(f, "-D") || starts_with(f, "--define-macro")) {
        if (f == "-D" || f == "--define-macro") {
          if (!next(value)) return false;
        } else {
          value = starts_with(f, "-D") ? f.substr(2) : f.substr(f.find('=') + 1);
        }
        define(value);
        continue;
      }
      if (starts_with(f, "-U")) {
        if (f == "-U") {
          if (!next(value)) return false;
        } else {
          value = f.substr(2);
        }
        flags.nvrtc_options.push_back("-U" + value);
        flags.cuda_host_flags.push_back("-U" + value);
        continue;
      }
      if (starts_with(f, "-maxrregcount") || starts_with(f, "--maxrregcount")) {
        if (!value_of(starts_with(f, "--") ? "--maxrregcount" : "-maxrregcount", value)) return false;
        flags.nvrtc_options.push_back("--maxrregcount=" + value);
        continue;
      }
      if (starts_with(f, "--ftz") || starts_with(f, "-ftz") || starts_with(f, "--prec-div") ||
          starts_with(f, "-prec-div") || starts_with(f, "--prec-sqrt") || starts_with(f, "-prec-sqrt") ||
          starts_with(f, "--fmad") || starts_with(f, "-fmad")) {
        std::string name = f.substr(0, f.find('='));
        if (!value_of(name, value)) return false;
        std::string option = name[1] == '-' ? name : "-" + name;
        flags.nvrtc_options.push_back(option + "=" + value);
        continue;
      }
      if (f == "-Xptxas" || starts_with(f, "--ptxas-options") || starts_with(f, "-Xptxas=")) {
        if (starts_with(f, "-Xptxas="))
          value = f.substr(8);
        else if (!value_of(f == "-Xptxas" ? "-Xptxas" : "--ptxas-options", value))
          return false;
        flags.nvrtc_options.push_back("--ptxas-options=" + value);
        continue;
      }
      if (f == "-Xcompiler" || starts_with(f, "--compiler-options") || starts_with(f, "-Xcompiler=")) {
        if (starts_with(f, "-Xcompiler="))
          value = f.substr(11);
        else if (!value_of(f == "-Xcompiler" ? "-Xcompiler" : "--compiler-options", value))
          return false;
        std::string item;
        for (char c : value + ",") {
          if (c == ',' || c == ' ') {
            if (!item.empty() && item != "'-fPIC'" && !host_flag(item, flags.cuda_host_flags, flags.cuda_std))
              return false;
            item.clear();
          } else if (c != '\'' && c != '"') {
            item += c;
          }
        }
        continue;
      }
      if (starts_with(f, "-arch") || starts_with(f, "--gpu-architecture") || starts_with(f, "-code") ||
          starts_with(f, "--gpu-code")) {
        std::string name = f.substr(0, f.find('='));
        if (!value_of(name, value)) return false;
        if (value == "native" || value == "all" || value == "all-major") return fail("nvcc flag " + f + " " + value);
        if (!take_gencode(value)) return false;
        continue;
      }
      if (starts_with(f, "-gencode") || starts_with(f, "--generate-code")) {
        std::string name = f.substr(0, f.find('='));
        if (!value_of(name, value)) return false;
        if (!take_gencode(value)) return false;
        continue;
      }
      if (starts_with(f, "--default-stream") || starts_with(f, "-default-stream")) {
        std::string name = f.substr(0, f.find('='));
        if (!value_of(name, value)) return false;
        if (value == "per-thread") {
          flags.cuda_host_flags.push_back("-DCUDA_API_PER_THREAD_DEFAULT_STREAM=1");
        } else if (value != "legacy" && value != "null") {
          return fail("unsupported nvcc flag " + f + " " + value);
        }
        continue;
      }
      if (f == "--threads" || f == "-t" || f == "-ccbin" || f == "--compiler-bindir" || f == "-Xcudafe" ||
          f == "--diag-suppress" || f == "-diag-suppress") {
        if (!next(value)) return false;
        continue;
      }
      if (starts_with(f, "--threads=") || starts_with(f, "-diag-suppress=") || starts_with(f, "--diag-suppress=") ||
          starts_with(f, "-Xcudafe=") || starts_with(f, "-ccbin="))
        continue;
      if (starts_with(f, "-l") || starts_with(f, "-L")) continue;  // nvcc -c ignores libraries
      if (f == "-rdc=true" || f == "-rdc" || f == "--relocatable-device-code=true" || f == "-dc" || f == "--device-c")
        return fail("relocatable device code (" + f + ")");
      if (f == "-rdc=false" || f == "--relocatable-device-code=false") continue;
      return fail("unsupported nvcc flag '" + f + "'");
    }
    // nvcc puts its host -O after the -Xcompiler flags, so it wins over theirs.
    if (nvcc_host_level.find_first_not_of('0') != std::string::npos)
      flags.cuda_host_flags.push_back("-O" + nvcc_host_level);
    return true;
  }

  bool ld_flags(const std::vector<std::string>& words) {
    static const std::set<std::string> torch_libs{"-lc10",          "-ltorch",    "-ltorch_cpu", "-ltorch_cuda",
                                                  "-ltorch_python", "-lc10_cuda", "-lcudart",    "-lpython3"};
    static const std::set<std::string> cuda_libs{"-lcublas", "-lcublasLt", "-lcurand", "-lcusparse",
                                                 "-lcufft",  "-lcusolver", "-lcuda",   "-lcudnn"};
    for (const std::string& f : words) {
      if (f.empty() || torch_libs.count(f) || starts_with(f, "-L") || starts_with(f, "-Wl,-rpath") ||
          starts_with(f, "-O"))
        continue;
      if (cuda_libs.count(f)) {
        flags.link_flags.push_back(f);
        continue;
      }
      if (f == "-fopenmp" || f == "-lgomp") {
        flags.link_flags.push_back("-fopenmp");
        continue;
      }
      if (f == "-lm" || f == "-lpthread" || f == "-ldl" || f == "-lrt") {
        flags.link_flags.push_back(f);
        continue;
      }
      return fail("unsupported linker flag '" + f + "'");
    }
    return true;
  }
};

}  // namespace

std::vector<std::string> split_flag_words(const std::vector<std::string>& entries) {
  std::vector<std::string> words;
  for (const std::string& entry : entries) {
    std::string word;
    char quote = 0;
    bool any = false;
    for (char c : entry) {
      if (quote) {
        if (c == quote)
          quote = 0;
        else
          word += c;
        continue;
      }
      if (c == '"' || c == '\'') {
        quote = c;
        any = true;
        continue;
      }
      if (std::isspace(static_cast<unsigned char>(c))) {
        if (!word.empty() || any) words.push_back(word);
        word.clear();
        any = false;
        continue;
      }
      word += c;
    }
    if (!word.empty()) words.push_back(word);
  }
  return words;
}

Result<CompileFlags> map_compile_flags(const std::vector<std::string>& extra_cflags,
                                       const std::vector<std::string>& extra_cuda_cflags,
                                       const std::vector<std::string>& extra_ldflags, std::string_view arch) {
  Mapper m;
  m.gpu_arch = std::string(arch);
  m.flags.arch = std::string(arch);
  if (arch_number(arch).empty()) return make_error("not a GPU architecture: '" + std::string(arch) + "'");
  for (const std::string& f : split_flag_words(extra_cflags))
    if (!m.host_flag(f, m.flags.cpp_host_flags, m.flags.cpp_std)) return make_error(m.error);
  if (!m.cuda_flags(split_flag_words(extra_cuda_cflags))) return make_error(m.error);
  if (!m.ld_flags(split_flag_words(extra_ldflags))) return make_error(m.error);
  return std::move(m.flags);
}

std::string host_optimization(const std::vector<std::string>& host_flags) {
  std::string level = "-O0";
  for (const std::string& f : host_flags)
    if (starts_with(f, "-O")) level = f;
  return level;
}

}  // namespace dicebench::fastpath
