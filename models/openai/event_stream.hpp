// Streamed chat completions: a reply of server-sent events ("data: {chat.completion.chunk}" lines,
// ending with "data: [DONE]", or, as Hugging Face's `transformers serve` ends them, with the
// finish_reason of every choice that came and a clean close) read back into the one chat.completion body the server
// would have sent unstreamed, so that the request cache and the reply reader see one format. Pure.
#pragma once

#include <string>
#include <string_view>

namespace dicebench::openai {

struct AssembledStream {
  std::string body;  // a chat.completion JSON body, or the stream's {"error": ...} event
  // "data: [DONE]" came, or at least one choice came and every one that came had its finish_reason
  // (else the stream was cut and the reply is partial). The caller knows whether the stream closed
  // cleanly. A server that ignores "n" sends fewer choices than asked for, each finished: that
  // reply is complete, and the caller asks for the rest.
  bool complete = false;
};

// Each choice's content (and reasoning_content, and logprobs.content entries) concatenated in
// order, its last finish_reason, the last usage the stream carried (stream_options.include_usage),
// and the first chunk's id, created and model. An event that is not JSON is skipped.
AssembledStream assemble_event_stream(std::string_view events);

// Whether a Content-Type header value names server-sent events.
bool is_event_stream(std::string_view content_type);

}  // namespace dicebench::openai
