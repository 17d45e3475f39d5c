// limiter.go -- a server whose knee is known, for `kneebench knee`'s tests: it answers
// every GET 200 "limited\n" while requests arrive at no more than --limit per second, and
// 503 for the excess (counted over the last quarter second). --limit 0 never refuses. Prints "listening on 127.0.0.1:PORT" when ready; ends on SIGTERM.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// window counts the requests of the last quarter second in 10 ms slots: past limit / 4 of
// them, a request is refused. A quarter second is long enough that a client's late, bunched
// sends (a few milliseconds' worth) do not cross it at a rate under the limit, and short
// enough that a rate a few percent over it is refused within every measured second.
type window struct {
	mu    sync.Mutex
	limit float64
	slots [25]int
	at    [25]int64
}

func (w *window) take() bool {
	if w.limit <= 0 {
		return true
	}
	slot := time.Now().UnixNano() / int64(10*time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	i := int(slot % 25)
	if w.at[i] != slot {
		w.at[i], w.slots[i] = slot, 0
	}
	n := 0
	for k := range w.slots {
		if slot-w.at[k] < 25 {
			n += w.slots[k]
		}
	}
	if float64(n+1) > w.limit/4 {
		return false
	}
	w.slots[i]++
	return true
}

func main() {
	limit := flag.Float64("limit", 0, "requests per second answered 200; 0: all")
	flag.Parse()
	b := &window{limit: *limit}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if !b.take() {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("busy\n"))
			return
		}
		w.Write([]byte("limited\n"))
	})
	fmt.Printf("listening on %s\n", ln.Addr())
	go http.Serve(ln, nil)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
