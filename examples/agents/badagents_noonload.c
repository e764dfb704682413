/* SPDX-License-Identifier: Apache-2.0 */
/* A library without Agent_OnLoad: loading it must end start-up with a clear message (tests). */
int badagent_not_an_agent(int x) { return x + 1; }
