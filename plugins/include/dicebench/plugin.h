/* dicebench plugin ABI: the only contract between the dicebench host and a plugin library.
 *
 * Plain C. Nothing but POD structs, pointer + length strings, opaque handles and status codes
 * crosses it; no C++ types, no exceptions. A plugin exports exactly one symbol,
 * DICEBENCH_ENTRY_SYMBOL, returning a descriptor that starts with the ABI version and the
 * descriptor's size. The host refuses a plugin whose ABI major differs from its own; a higher
 * minor adds fields at the end of structs only, which the host detects through struct_size.
 *
 * Sizes: every table that crosses (dicebench_host_services, dicebench_suite_api,
 * dicebench_model_api) starts with `uint32_t struct_size`, sizeof the table as its builder compiled
 * it; a reader uses a field only if the table is long enough to hold it. The descriptor alone puts
 * the version first and its size third: the host must read the major before it trusts any other
 * field, so those two words keep their place in every major.
 *
 * Optional calls: a field documented "optional" may be NULL (or lie past a shorter table); the host
 * asks for such a capability before using it. Required calls are never NULL.
 *
 * Ownership: strings a plugin hands out stay valid as documented per call; text produced by a
 * call travels through a sink callback and the receiver copies it before the call returns.
 */
#ifndef DICEBENCH_PLUGIN_H
#define DICEBENCH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DICEBENCH_ABI_MAJOR 1
#define DICEBENCH_ABI_MINOR 5
#define DICEBENCH_ENTRY_SYMBOL "dicebench_plugin_entry"

/* A string that is not NUL-terminated: pointer + length in bytes (UTF-8). */
typedef struct dicebench_str {
  const char* data;
  size_t size;
} dicebench_str;

typedef enum dicebench_status {
  DICEBENCH_OK = 0,
  DICEBENCH_FAILED = 1,    /* the error buffer holds one line saying why */
  DICEBENCH_CANCELLED = 2, /* the host asked to stop; or, from generate, the model cannot go on now (its
                              server stopped answering) and the error buffer says why: requests it gave
                              no result for stay to be generated, and the run stops interrupted, to be
                              resumed (ABI 1.2 hosts before this note ignore the reason and stop alike) */
  DICEBENCH_NOT_FOUND = 3  /* extract: the completion holds no candidate */
} dicebench_status;

typedef enum dicebench_kind { DICEBENCH_KIND_MODEL = 1, DICEBENCH_KIND_SUITE = 2 } dicebench_kind;

typedef enum dicebench_log_level {
  DICEBENCH_LOG_DEBUG = 0,
  DICEBENCH_LOG_INFO = 1,
  DICEBENCH_LOG_WARN = 2,
  DICEBENCH_LOG_ERROR = 3
} dicebench_log_level;

/* A failing call writes one NUL-terminated line here (truncated to fit). */
typedef struct dicebench_error {
  char message[1024];
} dicebench_error;

/* Receives text produced by a call; the receiver copies it before returning. */
typedef void (*dicebench_text_sink)(void* user, dicebench_str text);
/* A named finding with its detail (suite review); the receiver copies both before returning. */
typedef void (*dicebench_flag_sink)(void* user, dicebench_str flag, dicebench_str detail);

/* What the host offers every plugin. Plugins never link against host symbols. */
typedef struct dicebench_host_services {
  uint32_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  void* host;
  void (*log)(void* host, dicebench_log_level level, dicebench_str message);
  /* Looks up a resolved configuration value by dotted key ("kernelbench.root").
   * Returns 1 and sets *value (valid for the host's lifetime) when set, 0 otherwise. Look up every
   * setting of your section when opened (open_model, open_suite), set or not: the host then refuses
   * a key of your section that you never asked for, as a typo, before anything runs. */
  int (*config_get)(void* host, dicebench_str key, dicebench_str* value);
  /* Non-zero once the user asked to stop; long calls poll it and return DICEBENCH_CANCELLED. */
  int (*cancelled)(void* host);
} dicebench_host_services;

/* ---------------------------------------------------------------- suites */

typedef struct dicebench_suite dicebench_suite; /* opaque, owned by the plugin */

/* ABI 1.4: a problem as one span of text to fill, for models that fill a masked span natively (block
 * diffusion): the text before the span, the text after it, and the length in bytes of the suite's
 * own answer for the span, from which a model sizes its budget (the answer itself never crosses).
 * The layout is fixed for ABI 1.x. */
typedef struct dicebench_infill {
  dicebench_str before;
  dicebench_str after;
  uint64_t reference_span_bytes;
} dicebench_infill;

typedef struct dicebench_problem {
  int64_t id; /* problem id within its level */
  int32_t level;
  dicebench_str name;         /* e.g. "Square_matrix_multiplication_" */
  dicebench_str path;         /* file the problem was read from */
  dicebench_str source;       /* the reference program */
  dicebench_str content_hash; /* "sha256:<hex>" of source */
} dicebench_problem;

typedef struct dicebench_suite_api {
  uint32_t struct_size;
  /* Opens the suite `name` (one the descriptor provides), reading settings through services.
   * `services` stays valid until close. */
  dicebench_status (*open)(const dicebench_host_services* services, dicebench_str name, dicebench_suite** out,
                           dicebench_error* error);
  void (*close)(dicebench_suite* suite);
  /* Settings that shape prompts and extraction, as one JSON object, for the run record. */
  dicebench_status (*describe)(const dicebench_suite* suite, dicebench_text_sink sink, void* user,
                               dicebench_error* error);
  size_t (*problem_count)(const dicebench_suite* suite);
  /* Problems are ordered by level, then id; their strings stay valid until close. */
  dicebench_status (*problem)(const dicebench_suite* suite, size_t index, dicebench_problem* out,
                              dicebench_error* error);
  dicebench_status (*build_prompt)(const dicebench_suite* suite, size_t index, dicebench_text_sink sink, void* user,
                                   dicebench_error* error);
  /* Candidate program from a completion; DICEBENCH_NOT_FOUND when it holds none. */
  dicebench_status (*extract)(const dicebench_suite* suite, dicebench_str completion, dicebench_text_sink sink,
                              void* user, dicebench_error* error);
  /* ABI 1.1, optional (NULL, or absent from a 1.0 table): what the suite finds in a candidate for
   * problem `index` by reading it, before it runs. Each finding goes to `sink` as an evaluation
   * flag's name, in the host's vocabulary (an unknown name fails the run), and a one-line detail.
   * Findings qualify the verdict; they never change it. The host may call it from several threads
   * at once. */
  dicebench_status (*optional_review)(const dicebench_suite* suite, size_t index, dicebench_str candidate,
                                      dicebench_flag_sink sink, void* user, dicebench_error* error);
  /* ABI 1.3, optional (NULL, or absent from a 1.0-1.2 table): extract for problem `index`, for suites
   * whose candidate depends on the problem (kernel infilling: the item's prefix + the answer + its
   * suffix). Where present the host calls it instead of extract. The candidate goes to `sink` as
   * extract's does (DICEBENCH_NOT_FOUND: none); `details_sink`, at most once and also with
   * DICEBENCH_NOT_FOUND, receives one JSON object of what the suite measured about the answer, which
   * the host stores with the sample (samples.extraction_details); the keys the host reads back are
   * in dicebench/extraction_details.hpp. Both sinks take `user`. */
  dicebench_status (*optional_extract_problem)(const dicebench_suite* suite, size_t index, dicebench_str completion,
                                               dicebench_text_sink sink, dicebench_text_sink details_sink, void* user,
                                               dicebench_error* error);
  /* ABI 1.3, optional (NULL and 0, or absent from a 1.0-1.2 table): every flag name optional_review
   * may send to its sink, in the host's vocabulary; the strings stay valid for the life of the process.
   * The host refuses to open a suite that declares a name outside the vocabulary, and fails a review
   * that reports a name the suite did not declare. A table without the list may report any flag of
   * the vocabulary (as before 1.3). */
  const dicebench_str* optional_review_flags;
  size_t optional_review_flags_count;
  /* ABI 1.3, optional (NULL, or absent from a 1.0-1.2 table): the Python modules the candidates of the
   * opened suite import besides torch ("triton" for a Triton prompt), each sent to `sink` as one call;
   * none for a suite whose candidates import nothing else. Every entry point that evaluates checks
   * that the workers' Python has them before anything is evaluated. (A 1.2 table's describe() may
   * still name them in its JSON object's "candidate_python_modules", which the host reads then.) */
  dicebench_status (*optional_candidate_modules)(const dicebench_suite* suite, dicebench_text_sink sink, void* user,
                                                 dicebench_error* error);
  /* ABI 1.4, optional (NULL, or absent from a 1.0-1.3 table): problem `index` as a span to fill, for
   * models that fill spans natively; `out`'s strings stay valid until close. A suite with it has
   * optional_extract_span too. */
  dicebench_status (*optional_infill)(const dicebench_suite* suite, size_t index, dicebench_infill* out,
                                      dicebench_error* error);
  /* ABI 1.4, optional (with optional_infill): the candidate for problem `index` from a span a model
   * filled natively (the span's text verbatim: no code block around it), through the sinks of
   * optional_extract_problem. */
  dicebench_status (*optional_extract_span)(const dicebench_suite* suite, size_t index, dicebench_str span,
                                            dicebench_text_sink sink, dicebench_text_sink details_sink, void* user,
                                            dicebench_error* error);
  /* ABI 1.5, optional (NULL, or absent from a 1.0-1.4 table): optional_review for a problem that is
   * not one of the suite's, given as its source (a reinforcement-learning task set judged with this
   * suite's extraction and review). Findings go to `sink` as optional_review's do. Without it, such
   * a problem's candidates get no review. The host may call it from several threads at once. */
  dicebench_status (*optional_review_source)(const dicebench_suite* suite, dicebench_str problem_source,
                                             dicebench_str candidate, dicebench_flag_sink sink, void* user,
                                             dicebench_error* error);
} dicebench_suite_api;

/* ---------------------------------------------------------------- models */

typedef struct dicebench_model dicebench_model; /* opaque, owned by the plugin */

typedef struct dicebench_generation_request {
  dicebench_str prompt;
  dicebench_str suite; /* suite name, e.g. "kernelbench-l1" */
  int32_t level;
  int64_t problem_id;
  dicebench_str problem_name;
  int32_t sample_index;
  uint64_t seed; /* derived per (run seed, problem, sample) by the host */
} dicebench_generation_request;

typedef struct dicebench_generation_result {
  dicebench_str completion;
  dicebench_str stats_json; /* one JSON object: tokens, passes, seconds, ... ("{}" if none) */
  /* Optional, for replay: when data is non-NULL the completion is already the candidate program (a
   * stored kernel file, for example) and the suite's extraction is skipped. */
  dicebench_str optional_candidate;
} dicebench_generation_result;

/* Called once per finished request; the receiver copies what it keeps. */
typedef void (*dicebench_result_sink)(void* user, size_t request_index, const dicebench_generation_result* result);

typedef struct dicebench_model_api {
  uint32_t struct_size;
  /* Opens model `name` as the descriptor provides it ("replay:" for "replay:/runs/x");
   * `argument` is the text after that name (empty if none). `services` stays valid until close. */
  dicebench_status (*open)(const dicebench_host_services* services, dicebench_str name, dicebench_str argument,
                           dicebench_model** out, dicebench_error* error);
  void (*close)(dicebench_model* model);
  /* Settings that shape completions (weights, decoding, seeds), as one JSON object. */
  dicebench_status (*describe)(const dicebench_model* model, dicebench_text_sink sink, void* user,
                               dicebench_error* error);
  /* How many requests one generate call should carry. */
  size_t (*preferred_batch)(const dicebench_model* model);
  /* Sees every request of the run before any is generated, so bad input fails before
   * anything is stored (a replay folder with gaps, a prompt longer than the context). */
  dicebench_status (*prepare)(dicebench_model* model, const dicebench_generation_request* requests, size_t count,
                              dicebench_error* error);
  dicebench_status (*generate)(dicebench_model* model, const dicebench_generation_request* requests, size_t count,
                               dicebench_result_sink sink, void* user, dicebench_error* error);
  /* Optional (NULL for models that generate), for replay: for models that serve stored completions, the
   * problems of `level` they hold, as a JSON object {"<problem id>": <number of samples>, ...}.
   * The host then covers those problems (and that many samples) unless the user chose. */
  dicebench_status (*optional_stored_samples)(const dicebench_model* model, int32_t level, dicebench_text_sink sink,
                                              void* user, dicebench_error* error);
  /* ABI 1.4, optional (NULL, or absent from a 1.0-1.3 table): for models that fill spans natively. In a
   * run that fills spans (its suite has optional_infill), the host calls these instead of prepare and
   * generate; infill[i] belongs to requests[i], whose prompt then holds the span's description (JSON)
   * for the record. prepare_infill checks as prepare does, or answers DICEBENCH_NOT_FOUND where the
   * opened model cannot fill spans (an autoregressive model of a plugin that serves both): the host then
   * prompts it as any model. A result's completion is the span's text, verbatim. */
  dicebench_status (*optional_prepare_infill)(dicebench_model* model, const dicebench_generation_request* requests,
                                              const dicebench_infill* infill, size_t count, dicebench_error* error);
  dicebench_status (*optional_generate_infill)(dicebench_model* model, const dicebench_generation_request* requests,
                                               const dicebench_infill* infill, size_t count, dicebench_result_sink sink,
                                               void* user, dicebench_error* error);
} dicebench_model_api;

/* ---------------------------------------------------------------- descriptor */

/* A name the plugin serves. A name ending in ':' takes an argument ("replay:" serves
 * "replay:/path/to/folder"). */
typedef struct dicebench_provided_name {
  dicebench_str name;
  dicebench_str summary; /* one line for `dicebench list` */
} dicebench_provided_name;

/* ABI 1.2: a command-line flag a suite plugin declares for `dicebench run`, setting one of the
 * plugin's own settings (which it reads back through config_get). The host adds it to `run` before
 * parsing, in a group named after the plugin, and `--<flag> VALUE` sets `setting` to VALUE: it
 * overrides the --config file and `--set` overrides it, as with the host's own flags. With
 * `run --resume` it replaces the stored value (where the suite's files are now), so declare as flags
 * settings that locate things, not ones that change what is generated. The host refuses the plugin,
 * naming its file, for: a flag that is not a lowercase letter followed by lowercase letters, digits
 * and '-'; a setting outside the plugin's own section ("<plugin name>.<key>"), so that no plugin sets
 * the host's (eval.device, ...); a flag or a setting declared twice; options on a model plugin. A run
 * stops while two installed suite plugins declare one flag, or one declares a flag of `run` itself.
 * The layout is fixed for ABI 1.x: a later minor that needs more declares another array. */
typedef struct dicebench_option {
  dicebench_str flag;       /* "kernelbench-root" for --kernelbench-root */
  dicebench_str setting;    /* "kernelbench.root" */
  dicebench_str value_name; /* what the value is, for --help ("PATH"; empty: VALUE) */
  dicebench_str help;       /* one line for --help */
} dicebench_option;

typedef struct dicebench_plugin_descriptor {
  uint32_t abi_major;
  uint32_t abi_minor;
  uint32_t struct_size; /* sizeof(dicebench_plugin_descriptor) as the plugin was built */
  dicebench_kind kind;
  dicebench_str name; /* the plugin's own name, e.g. "kernelbench" */
  dicebench_str version;
  dicebench_str build_id; /* identifies the build (git sha, options) for the run record */
  const dicebench_provided_name* provides;
  size_t provides_count;
  const void* api; /* dicebench_model_api* or dicebench_suite_api*, per kind */
  /* ABI 1.2, optional (NULL and 0, or absent from a 1.0 or 1.1 descriptor): the flags a suite
   * plugin declares (dicebench_option); they stay valid for the life of the process. */
  const dicebench_option* optional_options;
  size_t optional_options_count;
} dicebench_plugin_descriptor;

typedef const dicebench_plugin_descriptor* (*dicebench_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* DICEBENCH_PLUGIN_H */
