package dev.codeexec.artifact;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A child-process program for the cross-process test: saves one name {@code count} times through its own
 * {@link FileSystemArtifactService} and prints {@code version<TAB>body} per save. It starts saving when a line
 * arrives on stdin, so that the parent can release several processes at once. Arguments: root, name, count, tag.
 */
final class ArtifactSaveLoop {

    private ArtifactSaveLoop() {
    }

    public static void main(String[] args) throws IOException {
        ArtifactService service = FileSystemArtifactService.at(Path.of(args[0]));
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        int count = Integer.parseInt(args[2]);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < count; i++) {
            String body = args[3] + "-" + i;
            int version = service.save(args[1], body.getBytes(StandardCharsets.UTF_8), "text/plain").version();
            out.append(version).append('\t').append(body).append('\n');
        }
        System.out.print(out);
        System.out.flush();
    }
}
