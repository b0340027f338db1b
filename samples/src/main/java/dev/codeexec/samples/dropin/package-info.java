/**
 * The README's drop-in example: {@link dev.codeexec.samples.dropin.HelpDesk}, an existing AI service that gains code
 * execution in a sandbox; the lines marked {@code // +} are the ones added to it. {@code HelpDeskReadmeTest} keeps the
 * README's copy identical and runs it.
 */
package dev.codeexec.samples.dropin;
