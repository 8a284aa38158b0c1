package io.dlock.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The proxy's round-trip count, against a real echo server on a loopback port. */
class TcpProxyTest {

    @Test
    void countsOneRoundTripPerRequestAndOneForPipelinedRequests() throws Exception {
        try (ServerSocket echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread server = new Thread(() -> echoAll(echo), "echo");
            server.setDaemon(true);
            server.start();
            try (TcpProxy proxy = TcpProxy.start(new InetSocketAddress(echo.getInetAddress(), echo.getLocalPort()));
                 Socket client = new Socket(proxy.address().getAddress(), proxy.address().getPort())) {
                client.setTcpNoDelay(true);
                OutputStream out = client.getOutputStream();
                DataInputStream in = new DataInputStream(client.getInputStream());
                byte[] answer = new byte[4];
                for (int i = 0; i < 3; i++) {
                    out.write(new byte[] {1, 2, 3, 4});
                    out.flush();
                    in.readFully(answer); // the answer has come back: the next write is a new round trip
                }
                // two requests sent before either answer is read: pipelined, one round trip
                out.write(new byte[] {1, 2});
                out.write(new byte[] {3, 4});
                out.flush();
                in.readFully(answer);
                TestTiming.await("4 round trips counted", Duration.ofSeconds(5), () -> proxy.roundTrips() == 4);
                assertEquals(4, proxy.roundTrips());
            }
        }
    }

    /** Answers every 4 bytes with those 4 bytes, so two 2-byte writes get one answer. */
    private static void echoAll(ServerSocket server) {
        try (Socket s = server.accept()) {
            DataInputStream in = new DataInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            byte[] request = new byte[4];
            while (true) {
                in.readFully(request);
                out.write(request);
                out.flush();
            }
        } catch (IOException e) {
            // the test closed the connection
        }
    }
}
