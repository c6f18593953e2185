// Package faultproxy is a TCP proxy on the loopback interface that a test
// puts between a client and PostgreSQL to cut the client off: Cut closes
// every forwarded connection and holds new ones, accepted but neither
// answered nor forwarded, as a pooler holds its clients while its server is
// unreachable; Open forwards the held connections and new ones again.
package faultproxy

import (
	"io"
	"net"
	"sync"
)

// Proxy forwards connections to one upstream address.
type Proxy struct {
	upstream string
	listener net.Listener

	mu     sync.Mutex
	cut    bool
	open   []net.Conn // forwarded client and server sides
	held   []net.Conn // clients accepted while cut
	heldCh chan struct{}
	wg     sync.WaitGroup
}

// Start listens on a free loopback port and forwards every connection to
// upstream (host:port).
func Start(upstream string) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{upstream: upstream, listener: l, heldCh: make(chan struct{}, 64)}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.listener.Addr().String() }

// Held receives once for every connection the proxy starts holding.
func (p *Proxy) Held() <-chan struct{} { return p.heldCh }

// Cut closes every forwarded connection and holds new ones until Open.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for _, c := range p.open {
		_ = c.Close()
	}
	p.open = nil
}

// Open forwards the held connections, and new ones, again.
func (p *Proxy) Open() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
	for _, c := range p.held {
		p.forwardLocked(c)
	}
	p.held = nil
}

// Close stops accepting, closes every connection and waits for the
// forwarding goroutines.
func (p *Proxy) Close() error {
	err := p.listener.Close()
	p.mu.Lock()
	for _, c := range append(p.open, p.held...) {
		_ = c.Close()
	}
	p.open, p.held = nil, nil
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.listener.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.held = append(p.held, c)
			p.heldCh <- struct{}{}
		} else {
			p.forwardLocked(c)
		}
		p.mu.Unlock()
	}
}

// forwardLocked connects client to the upstream and copies both ways until
// either side closes. The caller holds p.mu.
func (p *Proxy) forwardLocked(client net.Conn) {
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		_ = client.Close()
		return
	}
	p.open = append(p.open, client, server)
	p.wg.Add(2)
	// Either side ending (a cut included) closes both.
	pipe := func(dst, src net.Conn) {
		defer p.wg.Done()
		_, _ = io.Copy(dst, src)
		_ = dst.Close()
		_ = src.Close()
	}
	go pipe(server, client)
	go pipe(client, server)
}
