// Dropping a sandboxed worker's privileges just before it runs the job's program: root's special
// treatment on exec locked off, every capability out of the bounding, ambient, inheritable,
// permitted and effective sets, and no_new_privs (setuid bits and file capabilities never apply).
#pragma once

#include <string>

namespace dicebench::sandbox {

// Each returns "" on success, else what failed.
std::string drop_capabilities();
std::string set_no_new_privileges();

}  // namespace dicebench::sandbox
