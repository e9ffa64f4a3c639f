"""RealCodeJava (MERA): function-body completion in real Java repositories."""
