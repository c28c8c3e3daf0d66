package io.lakeprune.spark;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;

/** One call of the planner: the request's bytes out, the response parsed; a String reply is the user's one line. */
final class Wire {
    private Wire() {}

    static <T extends Message> T call(String method, Message request, Parser<T> response) {
        Object reply = Planners.get().call(method, request.toByteArray());
        if (reply instanceof String error) {
            throw UserErrors.analysis(error);
        }
        if (!(reply instanceof byte[] bytes)) {
            throw new IllegalStateException("lakeprune: the planner returned nothing for " + method + " (see the Python log)");
        }
        try {
            return response.parseFrom(bytes);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("lakeprune: the planner's " + method + " reply is not its response message", e);
        }
    }
}
