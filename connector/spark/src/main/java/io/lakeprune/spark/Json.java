package io.lakeprune.spark;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** JSON to and from the planner; a reply with an "error" field becomes the user's one line. */
final class Json {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {}

    static String write(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("lakeprune: cannot encode a planner request", e);
        }
    }

    static JsonNode reply(String text) {
        if (text == null) {
            throw new IllegalStateException("lakeprune: the planner returned nothing (see the Python log)");
        }
        JsonNode node;
        try {
            node = MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("lakeprune: the planner's reply is not JSON", e);
        }
        JsonNode error = node.get("error");
        if (error != null && !error.isNull()) {
            throw new IllegalArgumentException(error.asText());
        }
        return node;
    }
}
