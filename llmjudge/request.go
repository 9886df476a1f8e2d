package llmjudge

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/antidrift/antidrift/service"
)

// maxReason is the longest reason the schema lets the model write, so a
// random or rambling model's reply ends; the core shortens further for
// DriftReason.
const maxReason = 200

// maxTokens bounds a reply: the JSON of a verdict with the longest reason
// fits with room to spare, and a model that will not stop is cut off (and
// its reply, no longer schema-valid, is unknown).
const maxTokens = 256

// maxReply bounds the bytes read from a reply.
const maxReply = 1 << 20

// systemPrompt tells the model what it judges. The window's facts follow
// in the user message as JSON, so a title cannot pose as instructions
// without at least breaking out of a JSON string.
const systemPrompt = `You judge whether a desktop window is on task for a person's focus session.
You are given the person's next action, their success condition, and the window's class and title as JSON.
Answer on_task true when the window plausibly serves the next action (docs, code, tools, communication about it),
false when it is a distraction from it. Give a short reason a person understands, without repeating the title.
An empty window_title means the title is private: judge by the class alone.
A site, when given, is the page a browser window shows: its host, sometimes with its path.`

// verdictSchema constrains the reply (response_format json_schema).
var verdictSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"on_task": map[string]any{"type": "boolean"},
		"reason":  map[string]any{"type": "string", "maxLength": maxReason},
	},
	"required":             []string{"on_task", "reason"},
	"additionalProperties": false,
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatRequest is an OpenAI-compatible /chat/completions request.
type chatRequest struct {
	Model          string         `json:"model,omitempty"`
	Messages       []chatMessage  `json:"messages"`
	Temperature    float64        `json:"temperature"`
	MaxTokens      int            `json:"max_tokens"`
	Stream         bool           `json:"stream"`
	ResponseFormat responseFormat `json:"response_format"`
}

type responseFormat struct {
	Type       string     `json:"type"`
	JSONSchema jsonSchema `json:"json_schema"`
}

type jsonSchema struct {
	Name   string         `json:"name"`
	Strict bool           `json:"strict"`
	Schema map[string]any `json:"schema"`
}

// windowFacts is the user message: the only facts the model is given.
type windowFacts struct {
	NextAction       string `json:"next_action"`
	SuccessCondition string `json:"success_condition"`
	WindowClass      string `json:"window_class"`
	WindowTitle      string `json:"window_title"`
	// Site is the page in front of a browser window: its host, with the
	// path only when the person opted in (judge.site_paths).
	Site string `json:"site,omitempty"`
}

// newRequest builds the request for q.
func newRequest(model string, q service.Question) ([]byte, error) {
	return chatBody(model, systemPrompt, windowFacts{q.NextAction, q.SuccessCondition, q.Class, q.Title, q.Site}, maxTokens, "verdict", verdictSchema)
}

// chatBody is the one shape of every request antidrift makes of a model (a
// verdict, the coach's proposal, the review's note): the system prompt, the
// facts as JSON for the user's turn, and a reply held to schema.
func chatBody(model, system string, facts any, maxTokens int, name string, schema map[string]any) ([]byte, error) {
	f, err := json.Marshal(facts)
	if err != nil {
		return nil, err
	}
	return json.Marshal(chatRequest{
		Model: model,
		Messages: []chatMessage{
			{Role: "system", Content: system},
			{Role: "user", Content: string(f)},
		},
		MaxTokens: maxTokens,
		ResponseFormat: responseFormat{
			Type:       "json_schema",
			JSONSchema: jsonSchema{Name: name, Strict: true, Schema: schema},
		},
	})
}

// errUnreadable is a reply that is not a schema-valid verdict.
var errUnreadable = errors.New("its answer did not match the verdict schema")

// httpError is a reply with a status other than 200.
type httpError struct{ status string }

func (e httpError) Error() string { return "HTTP " + e.status }

// readReply turns an HTTP reply into a verdict, or says why it is not one.
func readReply(resp *http.Response) (service.Verdict, error) {
	content, err := readContent(resp, maxTokens)
	if err != nil {
		return service.Verdict{}, err
	}
	return parseVerdict(content)
}

// readContent is the message of a chat completion reply: an error for a
// status other than 200 (httpError), a body that is not a chat completion
// or a reply cut off at limit tokens (both errUnreadable).
func readContent(resp *http.Response, limit int) (string, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", httpError{resp.Status}
	}
	var reply struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &reply); err != nil || len(reply.Choices) == 0 {
		return "", fmt.Errorf("%w (not a chat completion)", errUnreadable)
	}
	c := reply.Choices[0]
	if c.FinishReason == "length" {
		return "", fmt.Errorf("%w (cut off at %d tokens)", errUnreadable, limit)
	}
	return c.Message.Content, nil
}

// parseVerdict reads {"on_task": bool, "reason": string} and nothing else.
// A reply that breaks the schema is unknown, never a guess.
func parseVerdict(content string) (service.Verdict, error) {
	dec := json.NewDecoder(strings.NewReader(content))
	dec.DisallowUnknownFields()
	var v struct {
		OnTask *bool   `json:"on_task"`
		Reason *string `json:"reason"`
	}
	if err := dec.Decode(&v); err != nil || v.OnTask == nil || v.Reason == nil || dec.More() {
		return service.Verdict{}, errUnreadable
	}
	if _, err := dec.Token(); err != io.EOF {
		return service.Verdict{}, errUnreadable
	}
	reason := strings.TrimSpace(*v.Reason)
	if *v.OnTask {
		if reason == "" {
			reason = "the judge found it on task"
		}
		return service.Verdict{Task: service.TaskOn, Reason: reason}, nil
	}
	if reason == "" {
		reason = "the judge found it off task"
	}
	return service.Verdict{Task: service.TaskOff, Reason: reason}, nil
}
