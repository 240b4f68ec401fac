"""A deterministic OpenAI-compatible chat-completions server for the openai: plugin's tests, which
behaves like vLLM's where the tests need it.

Listens on 127.0.0.1 on --port (default: a free one), written to --port-file. Like vLLM:
GET /v1/models lists the served models (--served-model-name, comma-separated) with their
max_model_len (--max-model-len), or none with --unlisted (as `transformers serve` pinned to one model,
which then answers 400 to a chat request for another); a path outside /v1 (or an unknown one) answers 404
{"detail": "Not Found"}; a chat request for a model it does not serve answers 404 with an
OpenAI-style error object, and one with top_p = 0 a 400; with --require-key, a request without
"Authorization: Bearer <--key>" answers 401 {"error": "Unauthorized"}; "n" choices share one usage
for the whole reply; "stream": true answers server-sent events ("data: {chunk}" per word, the usage
in a last chunk when stream_options.include_usage, then "data: [DONE]", or with --no-done not, as
`transformers serve` ends them); "logprobs": true gives
each choice one logprobs entry a token.

The answer to a prompt is a fixed function of the prompt, the seed and the choice's index (n
choices, or one with --ignore-n); a choice's token count is its number of words.
--script lists what the first chat requests get, in arrival order (429, 500, 400, malformed,
notchat, slow: 3 s before anything, drop: no reply, stall: the first streamed chunk then 10 s of
silence, cut: a streamed reply cut off before its end, abort: a streamed reply ended half-way with
finish_reason "abort" and [DONE], as vLLM ends the requests in flight when it shuts down, shutdown:
the server stops taking connections while this streamed reply stays open and silent for 60 s, as vLLM
shutting down waits for open connections to close, ok); later ones are answered normally.
--delay makes every chat reply wait before it starts; --chunk-delay waits between streamed chunks.
After every request --stats is rewritten with the counts: chat requests, model-list requests, the
most requests in flight at once, how many carried the key, how many were streamed, completed
replies, and the usage they reported in all (prompt and completion tokens).
"""
import argparse
import hashlib
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def words_of(text):
    """The text in pieces of one word each, with the whitespace after it (streamed one a chunk)."""
    pieces, current = [], ""
    for char in text:
        if not char.isspace() and current and current[-1].isspace():
            pieces.append(current)
            current = ""
        current += char
    if current:
        pieces.append(current)
    return pieces


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--stats", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", default="")
    parser.add_argument("--retry-after", default="")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--chunk-delay", type=float, default=0.0)
    parser.add_argument("--key", default="")
    parser.add_argument("--served-model-name", default="test-model")
    parser.add_argument("--max-model-len", type=int, default=4096)
    parser.add_argument("--ignore-n", action="store_true", help="answer one choice whatever n asks")
    parser.add_argument("--require-key", action="store_true", help="answer 401 to requests without --key")
    parser.add_argument("--unlisted", action="store_true",
                        help="as transformers serve pinned to one model: GET /v1/models lists none, and a chat "
                             "request for another model answers 400")
    parser.add_argument("--no-done", action="store_true",
                        help="end streams as transformers serve does: the finish_reason and usage chunks, then a "
                             "clean close, without data: [DONE]")
    args = parser.parse_args()

    served = [name for name in args.served_model_name.split(",") if name]
    script = [s for s in args.script.split(",") if s]
    lock = threading.Lock()
    state = {"chat_requests": 0, "models_requests": 0, "in_flight": 0, "max_in_flight": 0, "authorized": 0,
             "streamed": 0, "answered": 0, "prompt_tokens": 0, "completion_tokens": 0}

    def write_stats():
        temporary = args.stats + ".tmp"
        with open(temporary, "w") as out:
            json.dump(state, out)
        os.replace(temporary, args.stats)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def reply(self, status, body, headers=()):
            data = body.encode() if isinstance(body, str) else body
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def error(self, status, message, kind):
            """vLLM's error object."""
            self.reply(status, json.dumps({"error": {"message": message, "type": kind, "param": None, "code": status}}))

        def authorized(self):
            return args.key and self.headers.get("Authorization") == "Bearer " + args.key

        def refused(self):
            """vLLM with --api-key: every /v1 path wants the key."""
            if args.require_key and self.path.startswith("/v1") and not self.authorized():
                self.reply(401, json.dumps({"error": "Unauthorized"}))
                return True
            return False

        def do_GET(self):
            if self.refused():
                return
            if self.path != "/v1/models":
                self.reply(404, json.dumps({"detail": "Not Found"}))
                return
            with lock:
                state["models_requests"] += 1
                write_stats()
            data = [{"id": name, "object": "model", "created": 1700000000, "owned_by": "vllm", "root": name,
                     "parent": None, "max_model_len": args.max_model_len, "permission": []}
                    for name in ([] if args.unlisted else served)]
            self.reply(200, json.dumps({"object": "list", "data": data}))

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length) or b"{}")
            if self.refused():
                return
            if self.path != "/v1/chat/completions":
                self.reply(404, json.dumps({"detail": "Not Found"}))
                return
            with lock:
                number = state["chat_requests"]
                state["chat_requests"] += 1
                state["in_flight"] += 1
                state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
                state["authorized"] += 1 if self.authorized() else 0
                state["streamed"] += 1 if request.get("stream") else 0
                write_stats()
            try:
                if args.delay:
                    time.sleep(args.delay)
                self.answer(request, script[number] if number < len(script) else "ok")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client went away (a test killed it, or gave up on an idle reply)
            finally:
                with lock:
                    state["in_flight"] -= 1
                    write_stats()

        def answer(self, request, behaviour):
            if behaviour == "slow":  # longer than any test's timeout, then a good answer
                time.sleep(3)
                behaviour = "ok"
            if behaviour == "drop":  # the connection closes with no reply at all
                self.close_connection = True
                return
            if behaviour == "429":
                headers = [("Retry-After", args.retry_after)] if args.retry_after else []
                self.reply(429, json.dumps({"error": {"message": "slow down"}}), headers)
            elif behaviour == "500":
                self.reply(500, json.dumps({"error": {"message": "the server broke"}}))
            elif behaviour == "400":
                self.error(400, "this model's context is too short", "BadRequestError")
            elif behaviour == "malformed":
                self.reply(200, "<html>not json at all</html>")
            elif behaviour == "notchat":
                self.reply(200, json.dumps({"object": "list", "data": []}))
            elif request.get("model") not in served and args.unlisted:
                self.error(400, "Server is pinned to '%s'; requested '%s'." % (served[0], request.get("model")),
                           "BadRequestError")
            elif request.get("model") not in served:
                self.error(404, "The model `%s` does not exist." % request.get("model"), "NotFoundError")
            elif request.get("top_p") is not None and float(request["top_p"]) <= 0:
                self.error(400, "top_p must be in (0, 1], got %s." % float(request["top_p"]), "BadRequestError")
            else:
                self.completion(request, behaviour)

        def completion(self, request, behaviour):
            prompt = request["messages"][0]["content"]
            n = 1 if args.ignore_n else int(request.get("n", 1))
            choices = []
            for index in range(n):
                key = "%s|%s|%d" % (prompt, request.get("seed"), index)
                digest = hashlib.sha256(key.encode()).hexdigest()[:16]
                # Choices differ in length, so that an even split of the usage is not each one's own.
                filler = "".join([" more"] * (int(digest, 16) % 5)) if n > 1 else ""
                text = "Here it is:\n```python\nclass ModelNew:\n    pass  # %s%s\n```\n" % (digest, filler)
                choices.append({"index": index, "text": text, "tokens": len(text.split())})
            prompt_tokens = len(prompt.split())
            completion_tokens = sum(c["tokens"] for c in choices)  # one usage for all the choices, as vLLM gives
            usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                     "total_tokens": prompt_tokens + completion_tokens}
            reply_id = "chatcmpl-" + hashlib.sha256(prompt.encode()).hexdigest()[:16]
            logprobs = bool(request.get("logprobs"))

            def token_logprobs(text):
                return {"content": [{"token": w, "logprob": -0.5, "bytes": None, "top_logprobs": []} for w in text.split()]}

            if not request.get("stream"):
                body = {
                    "id": reply_id, "object": "chat.completion", "created": 1700000000, "model": request.get("model"),
                    "choices": [{"index": c["index"], "message": {"role": "assistant", "content": c["text"]},
                                 "logprobs": token_logprobs(c["text"]) if logprobs else None, "finish_reason": "stop"}
                                for c in choices],
                    "usage": usage,
                }
                self.reply(200, json.dumps(body))
                self.count_answer(usage)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

            def send(event):
                data = ("data: %s\n\n" % (event if isinstance(event, str) else json.dumps(event))).encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

            def chunk(choice_list, **extra):
                event = {"id": reply_id, "object": "chat.completion.chunk", "created": 1700000000,
                         "model": request.get("model"), "choices": choice_list}
                event.update(extra)
                return event

            for c in choices:
                send(chunk([{"index": c["index"], "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                             "finish_reason": None}]))
            if behaviour == "stall":  # silence, far longer than the test's idle timeout
                time.sleep(10)
            if behaviour == "shutdown":  # as vLLM shutting down: no new connections, this reply silent until closed
                threading.Thread(target=lambda: (server.shutdown(), server.server_close()), daemon=True).start()
                time.sleep(60)
                return
            pieces = [(c["index"], piece) for c in choices for piece in words_of(c["text"])]
            for number, (index, piece) in enumerate(pieces):
                if behaviour == "abort" and number == len(pieces) // 2:  # as vLLM ends what is in flight when it stops
                    for c in choices:
                        send(chunk([{"index": c["index"], "delta": {"content": ""}, "logprobs": None,
                                     "finish_reason": "abort"}]))
                    send("[DONE]")
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                    return
                if behaviour == "cut" and number == len(pieces) // 2:
                    self.close_connection = True
                    self.wfile.write(b"0\r\n\r\n")  # the stream ends cleanly, but before its end came
                    return
                if args.chunk_delay:
                    time.sleep(args.chunk_delay)
                send(chunk([{"index": index, "delta": {"content": piece},
                             "logprobs": token_logprobs(piece) if logprobs else None, "finish_reason": None}]))
            for c in choices:
                send(chunk([{"index": c["index"], "delta": {"content": ""}, "logprobs": None, "finish_reason": "stop"}]))
            if (request.get("stream_options") or {}).get("include_usage"):
                send(chunk([], usage=usage))
            if not args.no_done:
                send("[DONE]")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            self.count_answer(usage)

        def count_answer(self, usage):
            with lock:
                state["answered"] += 1
                state["prompt_tokens"] += usage["prompt_tokens"]
                state["completion_tokens"] += usage["completion_tokens"]
                write_stats()

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    with lock:
        write_stats()
    temporary = args.port_file + ".tmp"
    with open(temporary, "w") as out:
        out.write(str(server.server_address[1]))
    os.replace(temporary, args.port_file)
    server.serve_forever()
    time.sleep(60)  # after a "shutdown": replies in flight stay open (silent) until the test stops the process


if __name__ == "__main__":
    main()
