CREATE TABLE `job_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`job_id` integer NOT NULL,
	`at` text NOT NULL,
	`step` text NOT NULL,
	`attempt` integer NOT NULL,
	`outcome` text NOT NULL,
	`reason` text NOT NULL,
	`params` text,
	`detail` text NOT NULL,
	FOREIGN KEY (`job_id`) REFERENCES `file_jobs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `job_attempts_job` ON `job_attempts` (`job_id`,`id`);