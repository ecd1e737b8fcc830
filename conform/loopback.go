package conform

import "net"

// loopback listens on 127.0.0.1 whatever address kfake asks for: the suite
// never listens beyond this machine.
func loopback(network, address string) (net.Listener, error) {
	_, port, err := net.SplitHostPort(address)
	if err != nil {
		port = "0"
	}
	return net.Listen(network, net.JoinHostPort("127.0.0.1", port))
}
