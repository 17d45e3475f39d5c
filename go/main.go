// go-server: the kneebench "go" fixture -- net/http, standard library only.
//
// It serves the contract's routes (contract/contract.json): GET /plaintext and GET /json,
// 404 for any other path, 405 with "Allow: GET" for a known path with another method.
// Every response carries Content-Type, Content-Length, Date (net/http adds it) and Server,
// and keeps the connection alive.
//
// Parallelism is whatever GOMAXPROCS the environment gives (the contract sets it from the
// CPU limit); the server never scales itself to the host's CPU count.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

const serverName = "go-net/http"

var plaintextBody = []byte("Hello, World!")

// message is marshalled afresh on every request: the contract asks for a body serialised
// from a native value, not a cached string.
type message struct {
	Message string `json:"message"`
}

// writeBody sets the headers every fixture sends and writes the body in one call.
// Content-Length is set explicitly so no route is ever sent chunked.
func writeBody(w http.ResponseWriter, status int, contentType string, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{contentType}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body)
}

func handle(w http.ResponseWriter, r *http.Request) {
	w.Header()["Server"] = []string{serverName}
	var known bool
	switch r.URL.Path {
	case "/plaintext", "/json":
		known = true
	}
	if !known {
		writeBody(w, http.StatusNotFound, "text/plain", []byte("Not Found"))
		return
	}
	if r.Method != http.MethodGet {
		w.Header()["Allow"] = []string{"GET"}
		writeBody(w, http.StatusMethodNotAllowed, "text/plain", []byte("Method Not Allowed"))
		return
	}
	if r.URL.Path == "/plaintext" {
		writeBody(w, http.StatusOK, "text/plain", plaintextBody)
		return
	}
	// json.Marshal, not json.Encoder: the Encoder appends a newline the contract's
	// bytes do not have.
	body, err := json.Marshal(message{Message: "Hello, World!"})
	if err != nil {
		writeBody(w, http.StatusInternalServerError, "text/plain", []byte("marshal failed"))
		return
	}
	writeBody(w, http.StatusOK, "application/json", body)
}

func run() error {
	port := flag.Int("port", 8083, "TCP port to listen on")
	bind := flag.String("bind", "127.0.0.1", "address to bind")
	flag.Parse()

	ln, err := net.Listen("tcp", net.JoinHostPort(*bind, strconv.Itoa(*port)))
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(handle),
		// A slow or stalled client may not hold a connection forever before its
		// headers arrive; idle keep-alive connections live as long as nginx's default.
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       75 * time.Second,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
		return err
	case <-ctx.Done():
	}
	// A signal is a clean stop: close listeners and connections, exit 0.
	if err = srv.Close(); err != nil {
		return err
	}
	if err = <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "go-server:", err)
		os.Exit(1)
	}
}
