// The job's seccomp deny-list (syscall_filter.hpp), built with libseccomp.
#include "harness/sandbox/syscall_filter.hpp"

#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>

namespace dicebench::sandbox {
namespace {

// The lower bits of socket(2)'s type argument; the rest are SOCK_NONBLOCK and SOCK_CLOEXEC.
constexpr unsigned kSocketTypeMask = 0xf;

std::string failure(const std::string& what, int result) { return what + ": " + std::strerror(-result); }

// An argument condition (libseccomp's SCMP_A* macros are C compound literals).
scmp_arg_cmp argument(unsigned index, scmp_compare op, scmp_datum_t a, scmp_datum_t b = 0) {
  return scmp_arg_cmp{index, op, a, b};
}

struct FilterDeleter {
  void operator()(void* filter) const { seccomp_release(static_cast<scmp_filter_ctx>(filter)); }
};

// Refuses `call` where arguments match `conditions` (all of them); no conditions: always.
std::string refuse(scmp_filter_ctx filter, int call, const char* name, int error,
                   std::initializer_list<scmp_arg_cmp> conditions = {}) {
  const int result = seccomp_rule_add_exact_array(filter, SCMP_ACT_ERRNO(static_cast<uint32_t>(error)), call,
                                                  static_cast<unsigned>(conditions.size()), conditions.begin());
  return result == 0 ? "" : failure(std::string("refuse ") + name, result);
}

// clone with any namespace flag: one rule per flag (rules of one call are alternatives).
std::string refuse_namespace_clones(scmp_filter_ctx filter, int call) {
  const unsigned long flags = namespace_clone_flags();
  for (unsigned long flag = 1; flag != 0; flag <<= 1) {
    if (!(flags & flag)) continue;
    if (auto why = refuse(filter, call, "clone", EPERM, {argument(0, SCMP_CMP_MASKED_EQ, flag, flag)}); !why.empty())
      return why;
  }
  return "";
}

// socket(AF_PACKET, ...) and SOCK_RAW of the IP families; netlink's SOCK_RAW (glibc's getifaddrs) stays.
std::string refuse_raw_sockets(scmp_filter_ctx filter, int call) {
  if (auto why = refuse(filter, call, "socket", EPERM, {argument(0, SCMP_CMP_EQ, AF_PACKET)}); !why.empty()) return why;
  for (int family : {AF_INET, AF_INET6})
    if (auto why = refuse(filter, call, "socket", EPERM,
                          {argument(0, SCMP_CMP_EQ, static_cast<scmp_datum_t>(family)),
                           argument(1, SCMP_CMP_MASKED_EQ, kSocketTypeMask, SOCK_RAW)});
        !why.empty())
      return why;
  return "";
}

}  // namespace

unsigned long namespace_clone_flags() {
  unsigned long flags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET;
#ifdef CLONE_NEWCGROUP
  flags |= CLONE_NEWCGROUP;
#endif
#ifdef CLONE_NEWTIME
  flags |= CLONE_NEWTIME;
#else
  flags |= 0x00000080;  // CLONE_NEWTIME (Linux 5.6), absent from older headers
#endif
  return flags;
}

std::string install_syscall_filter(std::string* detail) {
  // Every other call allowed; calls of another architecture (32-bit int 0x80, x32) kill the
  // process, libseccomp's default for a foreign architecture, so none of the rules can be passed by.
  std::unique_ptr<void, FilterDeleter> owned(seccomp_init(SCMP_ACT_ALLOW));
  if (!owned) return "seccomp_init failed";
  auto* filter = static_cast<scmp_filter_ctx>(owned.get());
  // No speculative-store-bypass mitigation forced on the job for having a filter (kernels before
  // 5.16 default to spec_store_bypass_disable=seccomp): it would slow the candidate's CPU code, and
  // what it guards against (a process's own speculative reads) is no concern of this sandbox.
  // Kernels before 4.17 know no such flag: there the filter goes on without it.
  (void)seccomp_attr_set(filter, SCMP_FLTATR_CTL_SSB, 1);
  int refused = 0;
  std::set<std::string_view> classes;
  std::string classes_in_order;
  for (const auto& [name, refused_class] : kRefusedCalls) {
    const std::string call_name(name);
    const int call = seccomp_syscall_resolve_name(call_name.c_str());
    if (call == __NR_SCMP_ERROR || call < 0) continue;  // not a call of this architecture
    std::string why;
    if (name == "clone")
      why = refuse_namespace_clones(filter, call);
    else if (name == "clone3")
      why = refuse(filter, call, "clone3", ENOSYS);
    else if (name == "socket")
      why = refuse_raw_sockets(filter, call);
    else
      why = refuse(filter, call, call_name.c_str(), EPERM);
    if (!why.empty()) return why;
    ++refused;
    if (classes.insert(refused_class).second)
      classes_in_order += (classes_in_order.empty() ? "" : ", ") + std::string(refused_class);
  }
  if (const int result = seccomp_load(filter); result != 0) return failure("seccomp_load", result);
  if (detail) *detail = std::to_string(refused) + " calls refused: " + classes_in_order;
  return "";
}

}  // namespace dicebench::sandbox
