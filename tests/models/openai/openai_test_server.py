"""A deterministic OpenAI-compatible chat-completions server for the openai: plugin's tests.

Listens on 127.0.0.1 on a free port (written to --port-file), serves GET /v1/models and
POST /v1/chat/completions. The answer to a prompt is a fixed function of the prompt, the seed and
the choice's index (n choices, or one with --ignore-n).
--script lists what the first chat requests get, in arrival order (429, 500, 400, malformed,
notchat, slow: 3 s, drop: no reply, ok); later ones are answered normally. --delay makes every chat reply slow. After every
request --stats is rewritten with the counts: chat requests, model-list requests, the most
requests in flight at once, and how many carried "Authorization: Bearer <--key>".
"""
import argparse
import hashlib
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--stats", required=True)
    parser.add_argument("--script", default="")
    parser.add_argument("--retry-after", default="")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--key", default="")
    parser.add_argument("--ignore-n", action="store_true", help="answer one choice whatever n asks")
    parser.add_argument("--require-key", action="store_true", help="answer 401 to requests without --key")
    args = parser.parse_args()

    script = [s for s in args.script.split(",") if s]
    lock = threading.Lock()
    state = {"chat_requests": 0, "models_requests": 0, "in_flight": 0, "max_in_flight": 0, "authorized": 0}

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

        def authorized(self):
            return args.key and self.headers.get("Authorization") == "Bearer " + args.key

        def do_GET(self):
            if args.require_key and not self.authorized():
                self.reply(401, json.dumps({"error": {"message": "Incorrect API key provided"}}))
                return
            if self.path != "/v1/models":
                self.reply(404, json.dumps({"error": {"message": "no such path " + self.path}}))
                return
            with lock:
                state["models_requests"] += 1
                write_stats()
            self.reply(200, json.dumps({"object": "list", "data": [{"id": "test-model", "object": "model"}]}))

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length) or b"{}")
            if self.path != "/v1/chat/completions":
                self.reply(404, json.dumps({"error": {"message": "no such path " + self.path}}))
                return
            with lock:
                number = state["chat_requests"]
                state["chat_requests"] += 1
                state["in_flight"] += 1
                state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
                state["authorized"] += 1 if self.authorized() else 0
                write_stats()
            try:
                if args.delay:
                    time.sleep(args.delay)
                self.answer(request, script[number] if number < len(script) else "ok")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client went away (a test killed it)
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
                self.reply(400, json.dumps({"error": {"message": "this model's context is too short"}}))
            elif behaviour == "malformed":
                self.reply(200, "<html>not json at all</html>")
            elif behaviour == "notchat":
                self.reply(200, json.dumps({"object": "list", "data": []}))
            else:
                prompt = request["messages"][0]["content"]
                n = 1 if args.ignore_n else int(request.get("n", 1))
                choices = []
                for index in range(n):
                    key = "%s|%s|%d" % (prompt, request.get("seed"), index)
                    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
                    text = "Here it is:\n```python\nclass ModelNew:\n    pass  # %s\n```\n" % digest
                    choices.append({"index": index, "message": {"role": "assistant", "content": text},
                                    "finish_reason": "stop"})
                completion_tokens = sum(len(c["message"]["content"].split()) for c in choices)
                body = {
                    "id": "chatcmpl-" + digest,
                    "object": "chat.completion",
                    "model": request.get("model"),
                    "choices": choices,
                    "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": completion_tokens,
                              "total_tokens": len(prompt.split()) + completion_tokens},
                }
                self.reply(200, json.dumps(body))

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with lock:
        write_stats()
    temporary = args.port_file + ".tmp"
    with open(temporary, "w") as out:
        out.write(str(server.server_address[1]))
    os.replace(temporary, args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
