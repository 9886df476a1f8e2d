// Package llmjudge is the model judge and the coach. The judge asks any
// OpenAI-compatible chat completions server (llama.cpp's llama-server,
// Ollama, LM Studio, vLLM) whether a window is on task, for the windows no
// rule of the session decides. It implements service.Judge.
//
// The core calls Judge under its lock, so Judge never blocks: it hands the
// question to one worker goroutine and answers later. At most one request
// is in flight and one waits; a newer question replaces the waiting one
// (focus hopping fast must not queue hundreds of requests: the newest
// window wins). A server that is down, slow, answers HTTP errors or
// garbage makes the window unknown with a reason a person understands,
// logged once per outage, and is retried with backoff, not per focus event.
//
// The coach (Coach, coach.go) asks the same server, under the same
// privacy rule, for a proposal for a commitment (service.Coach): one
// request per Coach call, made on the caller's goroutine off the core's
// lock, never with a window title. It implements service.Coach.
package llmjudge
