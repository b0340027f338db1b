/**
 * Spring Boot auto-configuration of code execution: {@link dev.codeexec.spring.CodeExecAutoConfiguration} and its
 * {@code codeexec.*} properties ({@link dev.codeexec.spring.CodeExecProperties}). See {@code docs/spring-boot.md}.
 */
package dev.codeexec.spring;
